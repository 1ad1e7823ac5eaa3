import ArgumentParser
import Dispatch
import Logging
import Peregrine
import PeregrineAuth
import PeregrineCurlTransport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `peregrine get URL... [-i FILE] [-d DIR] [-o FILE]`: downloads on the same engine and store as every
/// other program of the package, so a rerun continues where the last run stopped.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URLs into a directory; run the same command again to continue.",
        discussion: """
            Each file downloads to a hidden temporary file in the output directory and takes its name only \
            after a 2xx answer with the announced length and, with --checksum, a matching digest (hashed while \
            the bytes arrive). A name is never given to two downloads, here or in another process: a taken \
            name gets " (1)" before its extension.

            Running the same command again continues every interrupted download from its last synced byte \
            (Range + If-Range; from zero when the file changed on the server) and does not download a file \
            that is complete: it is reported as complete (and checked when a checksum is given). \
            --overwrite downloads it again and replaces it once the new file is complete; --no-clobber never \
            replaces or renames around an \
            existing file. Ctrl-C or SIGTERM stops the transfers, keeps their partial files and exits; kill -9 \
            loses at most the last second of progress. What the next run resumes from is kept in a store under \
            $XDG_STATE_HOME/peregrine/get (~/.local/state/peregrine/get), one per output directory, or in \
            --state-dir; a run beside another in the same directory keeps its own, which the next run \
            takes over.

            --limit-rate caps each download (all its --split connections together) and --max-overall-limit \
            all of them together, shared fairly; a download under both keeps to the lower. Rates are bytes per \
            second with an optional K, M or G (powers of 1024), as curl's --limit-rate and aria2's \
            --max-overall-download-limit take them. A rerun applies the rates of its own command line.

            Transient failures (a dropped or reset connection, a timeout, 408, 429, 5xx) are retried \
            --retry times, waiting --retry-wait seconds and twice as long each time, honouring Retry-After; \
            the retry continues from the bytes on disk.

            --mirror names another URL of the same file (repeat it for several; in an input file, list a \
            file's mirrors on its line after its URL). The --split connections are spread over the URL and its \
            mirrors; a mirror that fails, announces another size or has no ETag or Last-Modified is dropped for \
            that file and its part goes to another; when the URL itself fails the download goes on from a \
            mirror. With --checksum, a mirror that serves other bytes is found and not used again.

            Standard output carries only results: the path of each file in place, one per line, or with \
            --json one JSON object per line for every event. Progress, with speed and remaining time, and \
            failures go to standard error. Passwords in URLs are used like --user, never printed or stored. \
            A proxy comes from -x or the http_proxy, https_proxy and no_proxy variables.

            \(GetExitCode.table)
            """,
        version: peregrineVersion
    )

    @Argument(help: "The http or https URLs to download.")
    var urls: [String] = []

    @Option(
        name: [.customShort("i"), .customLong("input-file")],
        help: ArgumentHelp(
            "Read URLs from FILE (- for standard input), one file per line, each optionally followed by its "
                + "mirrors' URLs, checksum=ALGORITHM=HEX and out=NAME, and by indented option lines as aria2 "
                + "reads them (out=, dir=, checksum=, header=, referer=, user-agent=); # starts a comment.",
            valueName: "file"))
    var inputFile: String?

    @Option(
        name: .customLong("mirror"),
        help: ArgumentHelp(
            "Another URL of the same file, for the one URL given (repeat for several).", valueName: "url"))
    var mirrors: [String] = []

    @Option(
        name: [.customShort("d"), .customLong("dir"), .customLong("directory")],
        help: ArgumentHelp("The directory to download into; made when missing.", valueName: "dir"))
    var directory: String = "."

    @Option(
        name: [.customShort("o"), .customShort("O"), .customLong("output")],
        help: ArgumentHelp(
            "The file to write the one URL given to (in -d when relative), as curl -o, wget -O and aria2c -o "
                + "take it; - for standard output.", valueName: "file"))
    var output: String?

    @Option(name: [.customShort("j"), .long], help: "How many downloads run at once.")
    var parallel: Int = 4

    @Flag(help: "Download complete files again and replace them.")
    var overwrite = false

    @Flag(help: "Never replace or rename around an existing file: skip the download.")
    var noClobber = false

    @Option(name: [.customShort("H"), .customLong("header")], help: "An extra request header, NAME: VALUE.")
    var headers: [String] = []

    @Option(name: [.customShort("A"), .customLong("user-agent")], help: "The User-Agent header.")
    var userAgent: String?

    @Option(name: .customLong("retry"), help: "How many times to retry a transient failure.")
    var retries: Int = 5

    @Option(name: .customLong("retry-wait"), help: "Seconds before the first retry; doubles each time.")
    var retryWait: Double = 1

    @Option(help: "Give up on a connection that receives nothing for this many seconds.")
    var timeout: Double?

    @Option(name: .customLong("connect-timeout"), help: "Seconds connecting (TCP and TLS) may take.")
    var connectTimeout: Double?

    @Option(
        name: .customLong("limit-rate"),
        help: ArgumentHelp(
            "The most bytes per second for each download, shared by its connections: 500k, 2M, 1.5M, 1G or bytes (0: none).",
            valueName: "rate"))
    var limitRate: String?

    @Option(
        name: .customLong("max-overall-limit"),
        help: ArgumentHelp(
            "The most bytes per second for all downloads together, shared fairly (same units).", valueName: "rate"))
    var maxOverallLimit: String?

    @Option(
        name: [.customShort("s"), .customLong("split")],
        help: ArgumentHelp(
            "Download each file over up to N connections (1–\(Segmentation.connectionRange.upperBound)), when the server allows ranges.",
            valueName: "n"))
    var splitOption: Int?

    /// The connections for each file: --split, under -x N when both are given.
    var split: Int {
        guard let perServer = maxConnectionsPerServer else { return splitOption ?? 1 }
        return splitOption.map { min($0, perServer) } ?? perServer
    }

    @Option(
        name: [.customShort("k"), .customLong("min-split-size")],
        help: ArgumentHelp(
            "Never split a file into pieces smaller than this: 1M, 512k (at least 64k).", valueName: "size"))
    var minSplitSize = "1M"

    @Option(
        name: .customLong("file-allocation"),
        help: ArgumentHelp(
            "falloc: reserve a file's blocks when it starts, so a full disk fails it at once (the default); none: do not.",
            valueName: "method"))
    var fileAllocation = "falloc"

    @Flag(
        name: [.customShort("R"), .customLong("remote-time")],
        help: "Give each file the time the server's Last-Modified names (curl's -R), not the time of the download.")
    var remoteTime = false

    @Flag(
        name: [.customShort("N"), .customLong("timestamping"), .customLong("conditional-get")],
        help: ArgumentHelp(
            "Fetch a file that is here already only when the server's copy is newer or of another size, and "
                + "replace it; files take the server's time (wget's -N, aria2c's --conditional-get)."))
    var timestamping = false

    @Option(
        name: [.customShort("x"), .customLong("proxy")],
        help: ArgumentHelp(
            "Use this proxy: http://[user:pass@]host:port (curl's -x). A number instead is aria2c's -x: "
                + "up to that many connections to the server for each file.",
            valueName: "proxy"))
    var proxy: String?

    @Option(
        name: .customLong("max-connection-per-server"),
        help: ArgumentHelp(
            "Up to N connections to the server for each file, as aria2c's -x: the --split it sets when --split "
                + "is not given, and its cap when it is.",
            valueName: "n"))
    var maxConnectionsPerServer: Int?

    @Option(
        name: [.customShort("e"), .customLong("referer")],
        help: ArgumentHelp("The Referer header, as curl's -e and wget's and aria2c's --referer.", valueName: "url"))
    var referer: String?

    @Flag(
        name: [.customShort("c"), .customLong("continue")],
        help: "Continue partial downloads (accepted for curl, wget and aria2c habits: every rerun continues).")
    var continues = false

    @Flag(help: "Write one JSON object per line on standard output for every event.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print no progress line.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Log what the engine does to standard error.")
    var verbose = false

    @Option(name: .customLong("log"), help: ArgumentHelp("Append log lines to FILE.", valueName: "file"))
    var logFile: String?

    @Option(
        name: .customLong("state-dir"),
        help: ArgumentHelp("Keep what a rerun resumes from here instead of $XDG_STATE_HOME.", valueName: "dir"))
    var stateDirectory: String?

    @Option(help: "Trust the CA certificates in this PEM file instead of the system's.")
    var cacert: String?

    @Option(help: "Require this public key: sha256//BASE64 (repeat for several).")
    var pin: [String] = []

    @Flag(help: "Do not check TLS certificates (unsafe).")
    var insecure = false

    @Option(help: "The most redirects to follow.")
    var maxRedirects: Int = 10

    @Flag(help: "Follow a redirect from https to plain http (refused otherwise, with exit status 10).")
    var allowInsecureRedirect = false

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

    @Flag(
        name: [.customShort("n"), .long],
        help: "Answer challenges with the credentials ~/.netrc (or $NETRC) has for the host (curl's -n).")
    var netrc = false

    @Option(help: ArgumentHelp("Read credentials from this netrc file (implies --netrc).", valueName: "file"))
    var netrcFile: String?

    @Option(
        name: [.customShort("b"), .customLong("load-cookies"), .customLong("cookie")],
        help: ArgumentHelp(
            "Send the cookies of this Netscape-format file where they match (wget's and aria2c's --load-cookies, "
                + "curl's -b FILE); the cookies servers set are sent back too.",
            valueName: "file"))
    var loadCookies: String?

    @Option(
        name: [.customLong("save-cookies"), .customLong("cookie-jar")],
        help: ArgumentHelp(
            "Write every cookie to this file in Netscape format when the run ends, readable by you only "
                + "(wget's and aria2c's --save-cookies, curl's -c).",
            valueName: "file"))
    var saveCookies: String?

    // MARK: Checking the flags

    mutating func validate() throws {
        // The URLs the command line had beyond the parser's reach, in order.
        urls += URLArguments.take()
        guard parallel >= 1 else { throw ValidationError("--parallel must be at least 1") }
        guard maxRedirects >= 0 else { throw ValidationError("--max-redirects must not be negative") }
        guard retries >= 0 else { throw ValidationError("--retry must not be negative") }
        guard retryWait > 0, retryWait.isFinite, retryWait <= 86_400 else {
            throw ValidationError("--retry-wait takes a number of seconds above 0 (at most a day)")
        }
        for (name, value) in [("--timeout", timeout), ("--connect-timeout", connectTimeout)] {
            if let value, !(value > 0 && value.isFinite && value <= 86_400) {
                throw ValidationError("\(name) takes a number of seconds above 0 (at most a day)")
            }
        }
        guard Segmentation.connectionRange.contains(split) else {
            throw ValidationError(
                "--split takes a number of connections from 1 to \(Segmentation.connectionRange.upperBound), not \(split)"
            )
        }
        guard let size = RateParser.bytesPerSecond(minSplitSize), size >= Segmentation.smallestSegmentSize else {
            throw ValidationError("--min-split-size takes a size of at least 64k, like 1M or 512k, not \(minSplitSize)")
        }
        guard ["falloc", "none"].contains(fileAllocation) else {
            throw ValidationError("--file-allocation takes falloc or none, not \(fileAllocation)")
        }
        _ = try perDownloadSpeedLimit()
        _ = try overallSpeedLimit()
        for header in headers {
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex,
                !header[..<colon].contains(where: { $0 == " " || $0 == "\t" }),
                !header.contains(where: { $0 == "\r" || $0 == "\n" })
            else {
                throw ValidationError("--header takes NAME: VALUE on one line, not \(header.prefix(60))")
            }
        }
        // -x 16 is aria2c's connections per server, -x host:port curl's proxy.
        if let value = proxy, !value.isEmpty,
            value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        {
            guard maxConnectionsPerServer == nil else {
                throw ValidationError("-x \(value) and --max-connection-per-server both set the connections per server")
            }
            maxConnectionsPerServer = Int(value)
            proxy = nil
        }
        if let perServer = maxConnectionsPerServer {
            guard Segmentation.connectionRange.contains(perServer) else {
                throw ValidationError(
                    "--max-connection-per-server (-x N) takes 1 to \(Segmentation.connectionRange.upperBound), not \(perServer)"
                )
            }
        }
        if let referer {
            guard (try? DownloadURL(referer)) != nil else {
                throw ValidationError("--referer takes an http or https URL, not \(referer.prefix(80))")
            }
            headers.append("Referer: \(referer)")
        }
        if let proxy {
            guard let components = URLComponents(string: proxy), let scheme = components.scheme,
                ["http", "https", "socks4", "socks4a", "socks5", "socks5h"].contains(scheme.lowercased()),
                components.host?.isEmpty == false
            else { throw ValidationError("--proxy takes SCHEME://HOST[:PORT], like http://proxy:3128") }
        }
        if let loadCookies {
            var info = stat()
            guard stat(loadCookies, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR, access(loadCookies, R_OK) == 0
            else { throw ValidationError("cannot read the cookie file \(loadCookies)") }
        }
        if let saveCookies {
            let slash = saveCookies.lastIndex(of: "/")
            let directory = slash.map { $0 == saveCookies.startIndex ? "/" : String(saveCookies[..<$0]) } ?? "."
            var info = stat()
            guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, access(directory, W_OK) == 0,
                stat(saveCookies, &info) != 0 || (info.st_mode & S_IFMT) == S_IFREG
            else { throw ValidationError("cannot write the cookie jar \(saveCookies)") }
        }
        if overwrite, noClobber { throw ValidationError("--overwrite and --no-clobber exclude each other") }
        if timestamping, noClobber {
            throw ValidationError("-N/--timestamping replaces older files; --no-clobber never does: give one")
        }
        if timestamping, overwrite {
            throw ValidationError("-N/--timestamping fetches only newer files; --overwrite fetches every one: give one")
        }
        guard !urls.isEmpty || inputFile != nil else { throw ValidationError("give URLs, or --input-file") }
        if let output {
            guard urls.count + (inputFile == nil ? 0 : 1) == 1 else {
                throw ValidationError(
                    "-o names the file of one URL; for several, give the directory with -d DIR (and out=NAME "
                        + "lines in an --input-file)")
            }
            if output == "-", json { throw ValidationError("-o - writes the file to standard output: not with --json") }
            try Self.checkOutputPath(output, in: directory)
        }
        if !mirrors.isEmpty, urls.count != 1 || inputFile != nil {
            throw ValidationError(
                "--mirror names other URLs of the one URL given; in an --input-file, list mirrors after a file's URL")
        }
        _ = try expectedChecksums()
        _ = try checksumSources()
        guard AuthenticationScheme.schemes(named: auth) != nil else {
            throw ValidationError("--auth takes basic, digest or any, not \(auth)")
        }
        if let user, !user.contains(":") { throw ValidationError("--user takes NAME:PASSWORD") }
        _ = try trustEvaluation()
        var status = stat()
        if stat(directory, &status) == 0, status.st_mode & S_IFMT != S_IFDIR {
            throw ValidationError("-d \(directory) is a file, not a directory")
        }
    }

    /// Refuses an -o that is not clearly a file's name: empty, ending in a slash, `.` or `..`, or
    /// an existing directory (people who meant the directory get the flag that says so).
    private static func checkOutputPath(_ output: String, in directory: String) throws(ValidationError) {
        guard output != "-" else { return }
        let name = output.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let target = output.hasPrefix("/") ? output : directory + "/" + output
        var status = stat()
        if name.isEmpty || name == "." || name == ".."
            || (stat(target, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
        {
            throw ValidationError(
                "-o names the file to write, as in curl and aria2c; \(output) is a directory: use -d \(output)")
        }
    }

    /// Whether the file goes to standard output (`-o -`).
    var writesToStandardOutput: Bool { output == "-" }

    /// The directory the files go to: -d, with the directory part of -o under it (or -o's own
    /// when absolute).
    var downloadDirectory: String {
        guard let output, output != "-", let slash = output.lastIndex(of: "/") else { return directory }
        let part = String(output[..<slash])
        if output.hasPrefix("/") { return part.isEmpty ? "/" : part }
        return directory == "." ? part : directory + "/" + part
    }

    /// The file name -o gives the one URL, without its directory.
    var outputName: String? {
        guard let output, output != "-" else { return nil }
        return output.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init)
    }

    /// The speed limit of each download (`--limit-rate`), checked; nil for none.
    func perDownloadSpeedLimit() throws(ValidationError) -> SpeedLimit? {
        try Self.speedLimit(limitRate, flag: "--limit-rate")
    }

    /// The speed limit of all downloads together (`--max-overall-limit`), checked; nil for none.
    func overallSpeedLimit() throws(ValidationError) -> SpeedLimit? {
        try Self.speedLimit(maxOverallLimit, flag: "--max-overall-limit")
    }

    private static func speedLimit(_ text: String?, flag: String) throws(ValidationError) -> SpeedLimit? {
        guard let text else { return nil }
        do throws(SpeedLimitError) {
            return try SpeedLimit.parse(text)
        } catch {
            throw ValidationError("\(flag): \(error.message)")
        }
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

    /// Every `--checksum`, checked; one per URL given on the command line.
    private func expectedChecksums() throws(ValidationError) -> [String?] {
        guard !checksums.isEmpty else { return urls.map { _ in nil } }
        guard checksums.count == urls.count else {
            throw ValidationError(
                "give one --checksum per URL, in order: \(urls.count) URL\(urls.count == 1 ? "" : "s"), "
                    + "\(checksums.count) checksum\(checksums.count == 1 ? "" : "s")")
        }
        for spec in checksums {
            do {
                _ = try Checksum(parsing: spec)
            } catch {
                throw ValidationError("--checksum \(spec.count > 80 ? String(spec.prefix(80)) + "…" : spec): \(error)")
            }
        }
        return checksums
    }

    /// The checksum file of each command-line URL, in order (nil when none was given).
    private func checksumSources() throws(ValidationError) -> [String?] {
        guard !checksumURLs.isEmpty else { return urls.map { _ in nil } }
        guard checksums.isEmpty else { throw ValidationError("give --checksum or --checksum-url, not both") }
        guard checksumURLs.count == 1 || checksumURLs.count == urls.count else {
            throw ValidationError(
                "give one --checksum-url for every URL, or one per URL in order: \(urls.count) URLs, "
                    + "\(checksumURLs.count) checksum URLs")
        }
        for string in checksumURLs {
            do {
                _ = try DownloadURL(string)
            } catch {
                throw ValidationError(
                    "--checksum-url \(string.count > 80 ? String(string.prefix(80)) + "…" : string): \(error)")
            }
        }
        return checksumURLs.count == 1 ? urls.map { _ in checksumURLs[0] } : checksumURLs
    }

    // MARK: Running

    func run() async throws {
        let items: [GetItem]
        do {
            items = try collectItems()
        } catch {
            throw ValidationError(error.description)
        }
        let logger = makeLogger()
        let netrcEntries = try loadNetrc()
        if let proxy {
            // libcurl reads these for every transfer; -x wins over the environment.
            setenv("http_proxy", proxy, 1)
            setenv("https_proxy", proxy, 1)
        }
        if insecure { printError("warning: TLS certificate checks are off") }
        // -o -: the file is downloaded into a private directory, then written to standard output.
        var scratch: String?
        if writesToStandardOutput {
            var template = Array(
                ((getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/peregrine-stdout.XXXXXX").utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                printError("cannot make a temporary directory: \(String(cString: strerror(errno)))")
                throw ExitCode(GetExitCode.disk)
            }
            scratch = String(cString: made)
        }
        defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }
        // One session per directory (`dir=` lines of an input file), one after the other.
        var status = GetExitCode.success
        var cookieFile = loadCookies
        for (directory, group) in Self.groupedByDirectory(items) {
            let groupStatus: Int32
            do {
                let session = try GetSession(
                    command: self, items: group, logger: logger, scratch: scratch, directory: directory,
                    netrc: netrcEntries, cookieFile: cookieFile)
                // The next directory's session starts from the cookies this one ended with.
                if let saveCookies { cookieFile = saveCookies }
                groupStatus = await session.run()
            } catch {
                printError("\(error)")
                groupStatus = GetExitCode.code(forSetupError: error)
            }
            if status == GetExitCode.success { status = groupStatus }
            if groupStatus == GetExitCode.interrupted || groupStatus == GetExitCode.terminated { break }
        }
        if status == GetExitCode.success, let scratch, !Self.copyOnlyFile(in: scratch) {
            throw ExitCode(GetExitCode.disk)
        }
        if status != GetExitCode.success { throw ExitCode(status) }
    }

    /// The items by the directory they go to, in the order each directory first appears; nil is
    /// the command's own (`-d`).
    static func groupedByDirectory(_ items: [GetItem]) -> [(directory: String?, items: [GetItem])] {
        var groups: [(directory: String?, items: [GetItem])] = []
        var indexOf: [String?: Int] = [:]
        for item in items {
            if let index = indexOf[item.directory] {
                groups[index].items.append(item)
            } else {
                indexOf[item.directory] = groups.count
                groups.append((item.directory, [item]))
            }
        }
        return groups.isEmpty ? [(nil, [])] : groups
    }

    /// Writes the one file downloaded into `scratch` to standard output; false (said on standard
    /// error) when it cannot.
    private static func copyOnlyFile(in scratch: String) -> Bool {
        guard let directory = opendir(scratch) else {
            printError("cannot read \(scratch): \(String(cString: strerror(errno)))")
            return false
        }
        var name: String?
        while let entry = readdir(directory) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if !entryName.hasPrefix(".") { name = entryName }
        }
        closedir(directory)
        guard let name else {
            printError("the download left no file to write to standard output")
            return false
        }
        let path = scratch + "/" + name
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            printError("cannot read \(path): \(String(cString: strerror(errno)))")
            return false
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count == 0 { return true }
            if count < 0 {
                if errno == EINTR { continue }
                printError("cannot read \(path): \(String(cString: strerror(errno)))")
                return false
            }
            var done = 0
            while done < count {
                let written = buffer.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + done, count - done) }
                if written < 0, errno == EINTR { continue }
                // A closed pipe (`| head`) ends the output, as it ends curl's.
                guard written > 0 else { return errno == EPIPE }
                done += written
            }
        }
    }

    /// The items of the command line and the input file, in order; credentials in URLs taken out.
    private func collectItems() throws(GetUsageError) -> [GetItem] {
        let sums: [String?]
        let sources: [String?]
        do {
            sums = try expectedChecksums()
            sources = try checksumSources()
        } catch {
            throw GetUsageError(error.message)
        }
        var items: [GetItem] = []
        for (index, url) in urls.enumerated() {
            var item = GetInput.item(url, origin: "URL \(index + 1)", checksum: sums[index], outputName: outputName)
            item.checksumURL = sources[index]
            GetInput.addMirrors(mirrors, to: &item)
            items.append(item)
        }
        if let inputFile {
            var fileItems = try GetInput.items(inputFile: inputFile)
            if let outputName, fileItems.count == 1 { fileItems[0].outputName = fileItems[0].outputName ?? outputName }
            items += fileItems
        }
        // A checksum in an input line is checked here too: a bad one fails its item only.
        for index in items.indices where items[index].problem == nil {
            if let spec = items[index].checksum, (try? Checksum(parsing: spec)) == nil {
                items[index].problem = "\(items[index].origin): checksum=\(spec.prefix(80)) is not ALGORITHM=HEX"
            }
            if let name = items[index].outputName, name.isEmpty || name.contains("/") || name == "." || name == ".." {
                items[index].problem = "\(items[index].origin): out=\(name.prefix(80)) is not a file name"
            }
        }
        if writesToStandardOutput, let item = items.first(where: { $0.directory != nil }) {
            throw GetUsageError("\(item.origin): dir= cannot apply when -o - writes to standard output")
        }
        return items
    }

    /// The netrc file's credentials with --netrc or --netrc-file: a missing ~/.netrc is none, a
    /// missing --netrc-file or a malformed file a usage error naming its line (never its
    /// secrets).
    private func loadNetrc() throws(ValidationError) -> Netrc? {
        let environment = ProcessInfo.processInfo.environment
        let path: String
        if let netrcFile {
            path = netrcFile
        } else if netrc {
            guard let file = environment["NETRC"] ?? environment["HOME"].map({ $0 + "/.netrc" }) else { return nil }
            path = file
        } else {
            return nil
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            if netrcFile == nil, !FileManager.default.fileExists(atPath: path) { return nil }
            throw ValidationError("cannot read the netrc file \(path)")
        }
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & 0o077 != 0 {
            printError("warning: \(path) holds passwords and others may read it (chmod 600 \(path))")
        }
        do throws(Netrc.ParseError) {
            return try Netrc(parsing: String(decoding: data, as: UTF8.self))
        } catch {
            throw ValidationError("the netrc file \(path), \(error)")
        }
    }

    private func makeLogger() -> Logger {
        let level: Logger.Level = verbose ? .debug : .warning
        let file = logFile.flatMap { path -> Int32? in
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            return fd >= 0 ? fd : nil
        }
        if logFile != nil, file == nil { printError("warning: cannot open the log file \(logFile!)") }
        var logger = Logger(label: "peregrine.get") { label in
            LineLogHandler(label: label, descriptors: (verbose ? [STDERR_FILENO] : []) + (file.map { [$0] } ?? []))
        }
        logger.logLevel = logFile != nil ? .debug : level
        return logger
    }

    // Read by the session.
    var trustPolicy: TrustPolicy { (try? trustEvaluation())?.policy ?? .system }
    var conflictPolicy: FileConflictPolicy { overwrite || timestamping ? .replace : noClobber ? .skip : .rename }
}

extension GetExitCode {
    /// The status when nothing could start: the directory, the state or the store.
    static func code(forSetupError error: any Error) -> Int32 {
        if let error = error as? DownloadManagerError, error.code == .directoryUnavailable { return disk }
        return unknown
    }
}

/// Log lines written straight to file descriptors: standard error with `--verbose`, the file of
/// `--log`. URLs reach the logs only without their credentials (they are taken out first).
struct LineLogHandler: LogHandler {
    let label: String
    let descriptors: [Int32]
    var logLevel: Logger.Level = .warning
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard !descriptors.isEmpty else { return }
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var line = "\(Date().formatted(.iso8601)) \(event.level) \(label): \(event.message)"
        if !fields.isEmpty { line += " " + fields }
        line += "\n"
        for descriptor in descriptors {
            line.withUTF8 { bytes in _ = write(descriptor, bytes.baseAddress, bytes.count) }
        }
    }
}
