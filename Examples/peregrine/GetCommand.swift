import ArgumentParser
import PeregrineCore
import PeregrineCurlTransport
import PeregrineTransport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `peregrine get URL... [-o DIR]`: downloads each URL into a directory with a live progress line.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download one or more URLs into a directory.",
        discussion: """
            Each file is written to a temporary file beside its destination and renamed into place only \
            after a 2xx answer with the announced length; a failed download leaves nothing behind. \
            The exit status is non-zero when any download failed.
            """
    )

    @Argument(help: "The http or https URLs to download.")
    var urls: [String]

    @Option(name: [.customShort("o"), .long], help: "The directory to download into.")
    var output: String = "."

    @Option(help: "How many downloads run at once.")
    var parallel: Int = 4

    @Flag(name: .shortAndLong, help: "Print no progress line.")
    var quiet = false

    @Option(help: "Trust the CA certificates in this PEM file instead of the system's.")
    var cacert: String?

    @Option(help: "Require this public key: sha256//BASE64 (repeat for several).")
    var pin: [String] = []

    @Flag(help: "Do not check TLS certificates (unsafe).")
    var insecure = false

    @Option(help: "The most redirects to follow.")
    var maxRedirects: Int = 10

    func validate() throws {
        guard parallel >= 1 else { throw ValidationError("--parallel must be at least 1") }
        guard maxRedirects >= 0 else { throw ValidationError("--max-redirects must not be negative") }
    }

    func run() async throws {
        // Every URL is checked before any I/O.
        var requests: [TransferRequest] = []
        for string in urls {
            do {
                var request = TransferRequest(url: try DownloadURL(string))
                request.trust = trustPolicy
                request.redirects = RedirectPolicy(maxHops: maxRedirects)
                requests.append(request)
            } catch {
                throw CommandFailure("\(error)")
            }
        }
        var status = stat()
        guard stat(output, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw CommandFailure("the output directory \(output) does not exist")
        }
        if insecure { printError("warning: TLS certificate checks are off") }

        let transport = CurlTransport()
        defer { transport.shutdown() }
        let board = ProgressBoard(total: requests.count, isEnabled: !quiet)
        let failures = await withTaskGroup(of: Bool.self) { group in
            var failures = 0
            var next = 0
            func launch() {
                let request = requests[next]
                next += 1
                group.addTask { await download(request, with: transport, board: board) }
            }
            while next < requests.count, next < parallel { launch() }
            for await succeeded in group {
                if !succeeded { failures += 1 }
                if next < requests.count { launch() }
            }
            return failures
        }
        board.finish()
        if failures > 0 {
            throw CommandFailure("\(failures) of \(requests.count) downloads failed")
        }
    }

    private var trustPolicy: TrustPolicy {
        if insecure { return .insecure }
        let authorities: TrustPolicy.Authorities = cacert.map { .file(path: $0) } ?? .system
        return TrustPolicy(authorities: authorities, pinnedPublicKeySHA256: pin)
    }

    /// Downloads one URL to a temporary file and renames it into place; returns whether it succeeded.
    private func download(_ request: TransferRequest, with transport: CurlTransport, board: ProgressBoard) async -> Bool
    {
        let directory = output.hasSuffix("/") ? output : output + "/"
        let name = FileNaming.fileName(for: request.url)
        let partial = directory + ".\(name).\(UInt32.random(in: 0...UInt32.max)).part"
        let slot = board.begin(name)
        do {
            let sink = try FileSink(path: partial)
            let summary = try await transport.download(request, to: sink) { progress in
                board.update(slot, progress)
            }
            try sink.close()
            let destination = FileNaming.freePath(for: name, in: directory)
            guard rename(partial, destination) == 0 else {
                throw CommandFailure("cannot move the download to \(destination): \(String(cString: strerror(errno)))")
            }
            board.end(slot, success: "\(ByteFormat.size(summary.receivedBytes)) → \(destination)")
            return true
        } catch {
            unlink(partial)
            board.end(slot, failure: "\(request.url): \(error)")
            return false
        }
    }
}

/// An error the command prints as one line, without a stack.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func printError(_ text: String) {
    writeToStandardError("peregrine: \(text)\n")
}

/// Writes text to standard error, unbuffered.
func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var done = 0
        while done < bytes.count {
            let written = write(STDERR_FILENO, bytes.baseAddress! + done, bytes.count - done)
            if written <= 0 { return }
            done += written
        }
    }
}
