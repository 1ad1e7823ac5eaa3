import Foundation

/// Runs command-line programs (`openssl`, `curl`, …) and captures what they print.
public enum ChildProcess {
    /// What a finished process printed, and how it exited.
    public struct Output: Sendable {
        /// The exit status (or the signal number, when it was killed by a signal).
        public var status: Int32
        /// Everything written to standard output.
        public var standardOutput: Data
        /// Everything written to standard error.
        public var standardError: Data

        /// Standard output as UTF-8 text.
        public var text: String { String(decoding: standardOutput, as: UTF8.self) }
        /// Standard error as UTF-8 text.
        public var errorText: String { String(decoding: standardError, as: UTF8.self) }
    }

    /// The path of a product this package built beside the running test binary (`peregrine`,
    /// `peregrine-queue`), or nil when it was not built (`swift build --build-tests` builds it).
    public static func builtProduct(named name: String) -> String? {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: me).deletingLastPathComponent()
        // On Linux the tests run from `<bin>/PeregrinePackageTests.xctest`; elsewhere from a bundle.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// Runs a program to its end and returns its output.
    ///
    /// Output goes to files rather than pipes, so a chatty program never blocks on a full pipe;
    /// the calling task is suspended (no thread is blocked) until the process exits.
    ///
    /// - Parameters:
    ///   - executable: the program's absolute path (see ``executable(named:debianPackage:)``).
    ///   - arguments: the arguments, without the program name.
    ///   - input: bytes for standard input; nothing (`/dev/null`) when nil.
    ///   - directory: the working directory, or the caller's when nil.
    ///   - environment: variables set for the program, on top of this process's environment.
    ///   - allowFailure: when false (the default) a non-zero exit status throws.
    /// - Throws: ``ChildProcessError`` when the program cannot be started, or exits with a
    ///   non-zero status and `allowFailure` is false; the message carries its standard error.
    @discardableResult
    public static func run(
        _ executable: String,
        _ arguments: [String],
        input: Data? = nil,
        directory: String? = nil,
        environment: [String: String] = [:],
        allowFailure: Bool = false
    ) async throws(ChildProcessError) -> Output {
        let command = ([executable] + arguments).joined(separator: " ")
        let scratch: TemporaryDirectory
        do {
            scratch = try TemporaryDirectory(prefix: "peregrine-child")
        } catch {
            throw ChildProcessError(command: command, message: "no scratch directory: \(error)")
        }
        defer { scratch.remove() }

        let outputPath = scratch.path("stdout")
        let errorPath = scratch.path("stderr")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        do {
            _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
            _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
            let standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
            let standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
            defer {
                try? standardOutput.close()
                try? standardError.close()
            }
            process.standardOutput = standardOutput
            process.standardError = standardError
            if let input {
                let inputPath = scratch.path("stdin")
                try input.write(to: URL(fileURLWithPath: inputPath))
                process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
            } else {
                process.standardInput = FileHandle.nullDevice
            }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                process.terminationHandler = { _ in continuation.resume() }
                do {
                    try process.run()
                } catch {
                    process.terminationHandler = nil
                    continuation.resume(throwing: error)
                }
            }
        } catch {
            throw ChildProcessError(command: command, message: "could not be run: \(error)")
        }

        let output = Output(
            status: process.terminationStatus,
            standardOutput: FileManager.default.contents(atPath: outputPath) ?? Data(),
            standardError: FileManager.default.contents(atPath: errorPath) ?? Data()
        )
        if output.status != 0, !allowFailure {
            let how = process.terminationReason == .uncaughtSignal ? "was killed by signal" : "exited with status"
            let details = output.errorText.trimmingCharacters(in: .whitespacesAndNewlines)
            throw ChildProcessError(
                command: command,
                status: output.status,
                message: "\(how) \(output.status)" + (details.isEmpty ? "" : ": \(details)")
            )
        }
        return output
    }

    /// The absolute path of a program found on `PATH` (or in the usual system directories).
    ///
    /// - Throws: ``ChildProcessError`` naming the Debian package to install when it is missing.
    public static func executable(named name: String, debianPackage: String) throws(ChildProcessError) -> String {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = searchPath.split(separator: ":").map(String.init) + systemDirectories
        for directory in directories where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ChildProcessError(
            command: name,
            message: "not found on PATH (\(searchPath)); install the Debian package \(debianPackage)"
                + " (apt-get install \(debianPackage))"
        )
    }

    /// Where programs are looked for after `PATH`.
    private static let systemDirectories = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]

    /// Checks that a program exists at a fixed path.
    ///
    /// - Throws: ``ChildProcessError`` naming the Debian package to install when it is missing.
    public static func requireExecutable(at path: String, debianPackage: String) throws(ChildProcessError) {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ChildProcessError(
                command: path,
                message: "not installed; install the Debian package \(debianPackage) (apt-get install \(debianPackage))"
            )
        }
    }
}
