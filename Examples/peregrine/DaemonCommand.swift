import ArgumentParser

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `peregrine daemon ARGS`: runs `peregrined ARGS` from the directory this program is in, in this
/// process (`execv`: the same PID, signals and standard streams, so systemd and scripts see no
/// difference). The service is its own program so that `peregrine get` does not load its server
/// stack (Hummingbird, SwiftNIO): that alone is several MiB of resident memory.
struct DaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Run the download service, peregrined (aria2-compatible JSON-RPC).",
        discussion: """
            Every argument goes to peregrined, which must be in the same directory as peregrine: \
            `peregrine daemon --help` shows its options.
            """
    )

    @Argument(parsing: .captureForPassthrough, help: "The arguments of peregrined.")
    var arguments: [String] = []

    func run() throws {
        let program = try Self.siblingProgram("peregrined")
        let argv = [program] + arguments
        var pointers = argv.map { strdup($0) }
        pointers.append(nil)
        execv(program, pointers)
        let reason = String(cString: strerror(errno))
        throw CommandFailure("cannot run \(program): \(reason)")
    }

    /// The path of `name` in the directory of the running executable.
    static func siblingProgram(_ name: String) throws(CommandFailure) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else {
            throw CommandFailure("cannot find this program's own path: \(String(cString: strerror(errno)))")
        }
        let own = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let directory = own.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let path = directory + "/" + name
        guard access(path, X_OK) == 0 else {
            throw CommandFailure(
                "\(name) is not next to \(own): build it with `swift build --product \(name)`, or run it directly")
        }
        return path
    }
}
