import ArgumentParser
import PeregrineAuth
import PeregrineCore
import PeregrineCurlTransport
import PeregrineTransport
import PeregrineVerification

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `peregrine get URL... [-o DIR] [--checksum ALGORITHM=HEX]... [--checksum-url URL]...`:
/// downloads each URL into a directory with a live progress line, verifying checksums (given,
/// or read from a checksum file) while the bytes arrive.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download one or more URLs into a directory.",
        discussion: """
            Each file is written to a temporary file beside its destination and renamed into place only \
            after a 2xx answer with the announced length and, with --checksum, a matching digest; a failed \
            download leaves nothing behind. The digest is computed while the file downloads, on a thread of \
            its own: no second pass over the file. A file whose digest does not match never reaches its \
            destination: it is kept as NAME.mismatch in the output directory (replacing an older one), or \
            deleted with --delete-mismatched. The exit status is non-zero when any download failed or did \
            not match.
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

    @Option(
        name: .customLong("checksum"),
        help: ArgumentHelp(
            "The expected digest, as ALGORITHM=HEX (e.g. sha256=9f86…; also ALGORITHM:HEX or sha-256=:BASE64:). "
                + "Give it once per URL, in the order of the URLs.",
            valueName: "algorithm=hex"))
    var checksums: [String] = []

    @Option(
        name: .customLong("checksum-url"),
        help: ArgumentHelp(
            "A checksum file to take the expected digest from: NAME.sha256 or a SHA256SUMS-style list, "
                + "whose entry is picked by the file's name. Give it once for every URL, or once per URL in order.",
            valueName: "url"))
    var checksumURLs: [String] = []

    @Flag(help: "Delete a file whose checksum does not match instead of keeping it as NAME.mismatch.")
    var deleteMismatched = false

    @Option(
        name: [.customShort("u"), .long], help: "Credentials as NAME:PASSWORD, answered to Basic or Digest challenges.")
    var user: String?

    @Option(help: "Which authentication schemes to answer: basic, digest or any.")
    var auth: String = "any"

    @Flag(help: "Allow credentials over plain http (they are sent only over https otherwise).")
    var authOverHTTP = false

    func validate() throws {
        guard parallel >= 1 else { throw ValidationError("--parallel must be at least 1") }
        guard maxRedirects >= 0 else { throw ValidationError("--max-redirects must not be negative") }
        _ = try expectedChecksums()
        _ = try checksumSources()
        guard AuthenticationScheme.schemes(named: auth) != nil else {
            throw ValidationError("--auth takes basic, digest or any, not \(auth)")
        }
        if let user, !user.contains(":") { throw ValidationError("--user takes NAME:PASSWORD") }
        _ = try trustEvaluation()
    }

    /// The trust asked for by `--cacert`, `--pin` and `--insecure`, checked: every pin must be
    /// the base64 of 32 bytes (`sha256//` optional), and `--insecure` excludes the other two.
    private func trustEvaluation() throws(ValidationError) -> ServerTrustEvaluation {
        if insecure {
            guard cacert == nil, pin.isEmpty else {
                throw ValidationError(
                    "--insecure turns certificate checks off; it cannot be combined with --cacert or --pin")
            }
            return .insecure
        }
        if let cacert, cacert.isEmpty { throw ValidationError("--cacert needs the path of a PEM file") }
        let authorities: TrustPolicy.Authorities = cacert.map { .file(path: $0) } ?? .system
        guard !pin.isEmpty else { return cacert.map { .customCA(bundlePath: $0) } ?? .systemCAs }
        let evaluation = ServerTrustEvaluation.pinnedPublicKeys(pin, authorities: authorities)
        do {
            try evaluation.validate()
        } catch {
            throw ValidationError("--pin: \(error)")
        }
        return evaluation
    }

    /// The transport: libcurl, wrapped in the Basic/Digest retrier when credentials were given.
    private func makeTransport(for requests: [TransferRequest]) -> (any Transport, shutdown: () -> Void) {
        let curl = CurlTransport()
        guard let user else { return (curl, curl.shutdown) }
        let separator = user.firstIndex(of: ":")!
        let credential = Credential(
            user: String(user[..<separator]), password: String(user[user.index(after: separator)...]))
        let store = CredentialStore()
        for request in requests { store.set(credential, for: ProtectionSpace(url: request.url)) }
        let configuration = AuthenticatingTransport.Configuration(
            allowedSchemes: AuthenticationScheme.schemes(named: auth) ?? Set(AuthenticationScheme.allCases),
            plainHTTPHosts: authOverHTTP ? Set(requests.map(\.url.host)) : []
        )
        return (
            AuthenticatingTransport(wrapping: curl, credentials: store, configuration: configuration), curl.shutdown
        )
    }

    /// The expected checksum of each URL, in order (nil when none was given); every spec is
    /// checked here, before any download starts.
    private func expectedChecksums() throws(ValidationError) -> [Checksum?] {
        guard !checksums.isEmpty else { return urls.map { _ in nil } }
        guard checksums.count == urls.count else {
            throw ValidationError(
                "give one --checksum per URL, in order: \(urls.count) URL\(urls.count == 1 ? "" : "s"), "
                    + "\(checksums.count) checksum\(checksums.count == 1 ? "" : "s")")
        }
        var result: [Checksum?] = []
        for spec in checksums {
            do {
                result.append(try Checksum(parsing: spec))
            } catch {
                throw ValidationError("--checksum \(spec.count > 80 ? String(spec.prefix(80)) + "…" : spec): \(error)")
            }
        }
        return result
    }

    /// The checksum file of each URL, in order (nil when none was given).
    private func checksumSources() throws(ValidationError) -> [DownloadURL?] {
        guard !checksumURLs.isEmpty else { return urls.map { _ in nil } }
        guard checksums.isEmpty else { throw ValidationError("give --checksum or --checksum-url, not both") }
        guard checksumURLs.count == 1 || checksumURLs.count == urls.count else {
            throw ValidationError(
                "give one --checksum-url for every URL, or one per URL in order: \(urls.count) URLs, "
                    + "\(checksumURLs.count) checksum URLs")
        }
        var sources: [DownloadURL?] = []
        for string in checksumURLs {
            do {
                sources.append(try DownloadURL(string))
            } catch {
                throw ValidationError(
                    "--checksum-url \(string.count > 80 ? String(string.prefix(80)) + "…" : string): \(error)")
            }
        }
        return sources.count == 1 ? urls.map { _ in sources[0] } : sources
    }

    func run() async throws {
        // Every URL and checksum is checked before any I/O.
        let expected = try expectedChecksums()
        let sources = try checksumSources()
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

        let (transport, shutdown) = makeTransport(for: requests)
        defer { shutdown() }
        let board = ProgressBoard(total: requests.count, isEnabled: !quiet)
        let failures = await withTaskGroup(of: Bool.self) { group in
            var failures = 0
            var next = 0
            func launch() {
                let request = requests[next]
                let checksum = expected[next]
                let source = sources[next]
                next += 1
                group.addTask {
                    await download(request, checksum: checksum, from: source, with: transport, board: board)
                }
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

    /// The result of the digest computed while downloading; when it could not be computed there
    /// (the transport wrote out of order), a second pass over the file.
    private static func verify(_ hashing: HashingSink, file: String, against expected: Checksum) throws
        -> VerificationResult
    {
        do {
            return try hashing.verify(against: expected)
        } catch  where error.code == .nonContiguousWrite {
            return try FileVerifier().verify(fileAt: file, against: expected)
        }
    }

    /// Keeps a mismatched download as `destination.mismatch` (or deletes it) and says which.
    private func setAside(_ partial: String, as destination: String) -> String {
        let policy: MismatchedFilePolicy = deleteMismatched ? .delete : .keepAside
        guard let aside = policy.asidePath(forDestination: destination) else {
            unlink(partial)
            return "the file was deleted"
        }
        guard rename(partial, aside) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(partial)
            return "the file was deleted (cannot keep it as \(aside): \(reason))"
        }
        return "the file was kept as \(aside)"
    }

    /// Reads the expected checksum of the file `name` from a checksum file, fetched into memory
    /// (at most 1 MiB) with the download's trust and redirect settings.
    private func fetchChecksum(
        from source: DownloadURL, for name: String, like template: TransferRequest, with transport: any Transport
    ) async throws -> Checksum {
        var request = template
        request.url = source
        let sink = MemorySink(limit: 1 << 20)
        do {
            _ = try await transport.download(request, to: sink)
        } catch {
            throw CommandFailure("no checksum from \(source): \(error)")
        }
        do {
            return try ChecksumList.checksum(
                fromChecksumFile: String(decoding: sink.bytes, as: UTF8.self), named: source.url.lastPathComponent,
                forFileNamed: [name])
        } catch {
            throw CommandFailure("no checksum from \(source): \(error)")
        }
    }

    /// The policy of every request; ``validate()`` has checked the options.
    private var trustPolicy: TrustPolicy {
        (try? trustEvaluation())?.policy ?? .system
    }

    /// Downloads one URL to a temporary file, checks its digest when one is expected, and renames
    /// it into place; returns whether it succeeded.
    private func download(
        _ request: TransferRequest,
        checksum given: Checksum?,
        from source: DownloadURL?,
        with transport: any Transport,
        board: ProgressBoard
    ) async -> Bool {
        let directory = output.hasSuffix("/") ? output : output + "/"
        let name = FileNaming.fileName(for: request.url)
        let partial = directory + ".\(name).\(UInt32.random(in: 0...UInt32.max)).part"
        let slot = board.begin(name)
        do {
            var checksum = given
            if let source {
                checksum = try await fetchChecksum(from: source, for: name, like: request, with: transport)
            }
            let file = try FileSink(path: partial)
            // With a checksum, the bytes are hashed on their own thread while they are written.
            let hashing = try checksum.map { expected throws(VerificationError) in
                try HashingSink(expected.algorithm, wrapping: file)
            }
            let summary = try await transport.download(request, to: hashing ?? file) { progress in
                board.update(slot, progress)
            }
            try file.close()
            var verified = ""
            if let checksum, let hashing {
                let result = try Self.verify(hashing, file: partial, against: checksum)
                if case .mismatch = result {
                    throw CommandFailure("\(request.url): \(result); \(setAside(partial, as: directory + name))")
                }
                verified = ", \(checksum.algorithm) verified"
            }
            let destination = FileNaming.freePath(for: name, in: directory)
            guard rename(partial, destination) == 0 else {
                throw CommandFailure("cannot move the download to \(destination): \(String(cString: strerror(errno)))")
            }
            board.end(slot, success: "\(ByteFormat.size(summary.receivedBytes)) → \(destination)\(verified)")
            return true
        } catch {
            unlink(partial)
            // A TLS failure names the certificate check that failed and what to do about it.
            let reason = (error as? TransportError).flatMap(ServerTrustFailure.init).map { "\($0)" } ?? "\(error)"
            board.end(slot, failure: "\(request.url): \(reason)")
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
