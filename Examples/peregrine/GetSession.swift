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

/// One run of `peregrine get`: a `DownloadManager` on the output directory's store, the items
/// added or resumed in it, and the events reported until every item ended.
final class GetSession: Sendable {
    let manager: DownloadManager
    let reporter: GetReporter
    let items: [GetItem]
    let overwrite: Bool
    let noClobber: Bool
    let deleteMismatched: Bool
    /// Each download's speed limit (`--limit-rate`); nil for none.
    let speedLimit: SpeedLimit?
    private let shutdownTransport: @Sendable () -> Void
    /// `-N`: a file here already is fetched again only when the server's copy is newer.
    let timestamping: Bool
    /// For the requests of `-N`, which go round the manager.
    private let transport: any Transport
    private let adapter: GetRequestAdapter
    private let interrupted = Atomic<Bool>(false)

    /// - Parameter scratch: a private directory for the download and its state (`-o -`: the file
    ///   is written to standard output afterwards), instead of the command's directories.
    /// - Parameter directory: the directory of these items (`dir=` of an input file) instead of
    ///   the command's; relative to the current directory, as aria2 reads it.
    init(
        command: GetCommand, items: [GetItem], logger: Logger, scratch: String? = nil, directory: String? = nil,
        netrc: Netrc? = nil, cookieFile: String? = nil
    ) throws {
        self.items = items
        overwrite = command.overwrite
        noClobber = command.noClobber
        deleteMismatched = command.deleteMismatched
        timestamping = command.timestamping
        speedLimit = try command.perDownloadSpeedLimit()
        reporter = GetReporter(
            total: items.count, json: command.json, quiet: command.quiet || command.json,
            printsPaths: !command.writesToStandardOutput)

        let itemDirectory = directory
        let directory: DownloadDirectory
        do {
            directory = try DownloadDirectory(path: scratch ?? itemDirectory ?? command.downloadDirectory)
        } catch {
            throw DownloadManagerError(.directoryUnavailable, "\(error)")
        }
        // --state-dir is the command's directory's: another directory keeps its state beside it.
        let state =
            scratch.map { $0 + "/.state" }
            ?? command.stateDirectory.map { itemDirectory == nil ? $0 : $0 + "/" + GetState.name(for: directory.path) }
            ?? GetState.directory(for: directory.path)

        var curlConfiguration = CurlTransport.Configuration(
            maxConnections: max(64, command.parallel * 2, command.split * 2),
            // The cap per host is shared by every download: room for one split download.
            maxConnectionsPerHost: max(16, command.split),
            userAgent: command.userAgent ?? CurlTransport.Configuration().userAgent, logger: logger)
        curlConfiguration.cookieFile = cookieFile
        curlConfiguration.cookieJar = command.saveCookies
        let curl = CurlTransport(configuration: curlConfiguration)
        shutdownTransport = { curl.shutdown() }
        var transport: any Transport = curl
        let credentials = CredentialStore()
        var hasCredentials = false
        for item in items where item.problem == nil {
            guard let url = try? DownloadURL(item.url) else { continue }
            // The file's URL and its mirrors: each answers challenges with its own credentials,
            // or with --user.
            var sources = [(url, item.credential)]
            for mirror in item.mirrors {
                if let mirrorURL = try? DownloadURL(mirror) {
                    sources.append((mirrorURL, item.mirrorCredentials[mirror]))
                }
            }
            for (source, inURL) in sources {
                if let credential = inURL {
                    credentials.set(credential, for: ProtectionSpace(url: source))
                    hasCredentials = true
                } else if let user = command.user, let colon = user.firstIndex(of: ":") {
                    let credential = Credential(
                        user: String(user[..<colon]), password: String(user[user.index(after: colon)...]))
                    credentials.set(credential, for: ProtectionSpace(url: source))
                    hasCredentials = true
                } else if let entry = netrc?.entry(for: source.host) {
                    credentials.set(
                        Credential(user: entry.login, password: entry.password), for: ProtectionSpace(url: source))
                    hasCredentials = true
                }
            }
        }
        if hasCredentials {
            let hosts =
                command.authOverHTTP
                ? Set(items.flatMap { [$0.url] + $0.mirrors }.compactMap { try? DownloadURL($0).host }) : []
            transport = AuthenticatingTransport(
                wrapping: curl, credentials: credentials,
                configuration: AuthenticatingTransport.Configuration(
                    allowedSchemes: AuthenticationScheme.schemes(named: command.auth)
                        ?? Set(AuthenticationScheme.allCases),
                    plainHTTPHosts: hosts))
        }

        var timeouts = TransferTimeouts()
        if let seconds = command.connectTimeout { timeouts.connect = .milliseconds(Int64(seconds * 1000)) }
        if let seconds = command.timeout {
            timeouts.lowSpeed = .init(bytesPerSecond: 1, duration: .milliseconds(Int64(seconds * 1000)))
        }
        var headers = HTTPHeaders()
        for header in command.headers {
            let colon = header.firstIndex(of: ":")!
            headers.add(
                name: String(header[..<colon]),
                value: String(header[header.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" })))
        }
        var itemHeaders: [String: [(name: String, value: String)]] = [:]
        for item in items where !item.headers.isEmpty { itemHeaders[item.url, default: []] += item.headers }
        let adapter = GetRequestAdapter(
            headers: headers, itemHeaders: itemHeaders, trust: command.trustPolicy,
            redirects: RedirectPolicy(
                maxHops: command.maxRedirects, allowsHTTPSToHTTP: command.allowInsecureRedirect),
            timeouts: timeouts)
        self.transport = transport
        self.adapter = adapter

        let retryPolicy: (any RetryPolicy)? =
            command.retries == 0
            ? nil
            : try BackoffRetryPolicy(
                maxRetries: command.retries, initialDelay: .milliseconds(Int64(command.retryWait * 1000)),
                maxDelay: .seconds(max(60, Int64(command.retryWait))))
        let locked = Mutex(false)
        let storeFactory: DownloadManager.StoreFactory = { identifier, configuration throws(StoreError) in
            do throws(StoreError) {
                return try DownloadManager.Configuration.defaultStoreFactory(identifier, configuration)
            } catch {
                if error.code == .locked { locked.withLock { $0 = true } }
                throw error
            }
        }
        var configuration = DownloadManager.Configuration(
            downloadDirectory: directory.path, stateDirectory: state, transport: transport,
            storeFactory: storeFactory, flushDelay: .milliseconds(250))
        configuration.thumbnails = Thumbnailer.Configuration(cachePolicy: .memoryOnly)
        configuration.maxDownloadCount = command.parallel
        configuration.conflictPolicy = command.conflictPolicy
        configuration.requestAdapter = adapter
        configuration.retryPolicy = retryPolicy
        configuration.logger = logger
        configuration.verificationRetry = VerificationRetryPolicy(
            maxAttempts: 1, mismatchedFile: command.deleteMismatched ? .delete : .keepAside)
        configuration.isTrashOpened = false
        configuration.preallocatesFiles = command.fileAllocation == "falloc"
        configuration.usesRemoteTime = command.remoteTime || command.timestamping
        configuration.overallSpeedLimit = try command.overallSpeedLimit()
        configuration.segmentation = Segmentation(
            maxConnectionsPerTask: command.split,
            minimumSegmentSize: RateParser.bytesPerSecond(command.minSplitSize) ?? Segmentation().minimumSegmentSize)
        // One store per output directory; a second process on the same directory takes the next.
        var opened: DownloadManager?
        var ours = ""
        for identifier in GetState.identifiers {
            locked.withLock { $0 = false }
            do {
                opened = try DownloadManager(identifier: identifier, configuration: configuration)
                ours = identifier
                break
            } catch {
                guard locked.withLock({ $0 }) else { throw error }
            }
        }
        guard let opened else {
            throw DownloadManagerError(.storeFailed, "every store under \(state) is in use by another process")
        }
        manager = opened
        // The flag of this run wins over the limit the store kept from the last one.
        manager.maxDownloadCount = command.parallel
        GetState.describe(state, output: directory.path)
        Self.adoptOtherRuns(into: opened, ours: ours, configuration: configuration, logger: logger)
    }

    /// Takes over what the other stores of this directory hold and no process has open: runs
    /// that ran beside another one used the next store, and a rerun must find their finished
    /// files and resume their partial ones rather than fetch them again under another name.
    /// The tasks leave the other store only once this one has them durably; a store in use by
    /// a live process is left alone.
    private static func adoptOtherRuns(
        into manager: DownloadManager, ours: String, configuration: DownloadManager.Configuration, logger: Logger
    ) {
        // Only stores that exist: opening one makes it.
        let present = (try? FileManager.default.contentsOfDirectory(atPath: configuration.stateDirectory)) ?? []
        for identifier in GetState.identifiers where identifier != ours {
            guard present.contains(where: { $0 == identifier || $0.hasPrefix(identifier + ".") }) else { continue }
            let store: any TaskStore
            let snapshot: StoreSnapshot
            do {
                store = try configuration.storeFactory(
                    identifier,
                    StoreConfiguration(
                        rootDirectory: configuration.stateDirectory, flushDelay: configuration.flushDelay))
                snapshot = try store.load()
            } catch {
                if error.code != .locked {
                    logger.warning("cannot read the state of another run", metadata: ["error": "\(error)"])
                }
                continue
            }
            defer { try? store.close() }
            guard !snapshot.tasks.isEmpty else { continue }
            let taken = Set(manager.adoptTasks(of: snapshot))
            guard !taken.isEmpty else { continue }
            do {
                try manager.saveData()
                var changes = taken.sorted().map { StoreChange.removeTask(urlString: $0) }
                for (_, list) in snapshot.lists.sorted(by: { $0.key < $1.key }) {
                    var kept = list
                    kept.sections = list.sections.map { $0.filter { !taken.contains($0) } }
                    kept.trash = list.trash.filter { !taken.contains($0) }
                    changes.append(.putList(kept))
                }
                try store.record(changes)
            } catch {
                logger.warning("cannot hand over the state of another run", metadata: ["error": "\(error)"])
            }
        }
    }

    // MARK: Running

    /// Adds or resumes every item, reports until each ended, and returns the exit status.
    func run() async -> Int32 {
        installSignalHandlers()
        let events = manager.events()
        var statuses: [Int32?] = Array(repeating: nil, count: items.count)
        var itemOfTask: [String: Int] = [:]
        var toAdd: [DownloadItem] = []
        var indexOfAdded: [String: Int] = [:]
        var seen: [String: Int] = [:]
        // -N: the items whose finished files the server has a newer copy of, fetched again.
        var refreshed: Set<Int> = []

        for (index, item) in items.enumerated() {
            reporter.added(item)
            if let problem = item.problem {
                reporter.failed(item, code: "usage", status: GetExitCode.usage, message: problem)
                statuses[index] = GetExitCode.usage
                continue
            }
            let key = (try? DownloadURL(item.url).normalizedKey) ?? item.url
            if let first = seen[key] {
                reporter.skipped(item, because: "the same URL as \(items[first].origin)")
                statuses[index] = GetExitCode.success
                continue
            }
            seen[key] = index
            if timestamping, let current = localCopy(of: key, item) {
                if await serverCopy(of: item, isNewerThan: current) {
                    refreshed.insert(index)
                } else {
                    reporter.upToDate(item, path: current, size: fileSize(current))
                    statuses[index] = GetExitCode.success
                    continue
                }
            }
            toAdd.append(
                DownloadItem(
                    item.url, preferredFileName: item.outputName, checksum: item.checksum,
                    checksumURL: item.checksumURL, speedLimit: speedLimit, mirrors: item.mirrors))
            indexOfAdded[item.url] = index
        }

        let addition: DownloadAddition
        do {
            addition = try manager.download(toAdd).addition
        } catch {
            for index in indexOfAdded.values {
                reporter.failed(items[index], code: "unknown", status: GetExitCode.unknown, message: "\(error)")
                statuses[index] = GetExitCode.unknown
            }
            return finish(statuses)
        }
        for url in addition.added { itemOfTask[url] = indexOfAdded[url] }
        for invalid in addition.invalid {
            guard let index = indexOfAdded[invalid.urlString] else { continue }
            reporter.failed(items[index], code: "usage", status: GetExitCode.usage, message: "\(invalid.error)")
            statuses[index] = GetExitCode.usage
        }
        for refused in addition.invalidChecksums {
            guard let index = indexOfAdded[refused.urlString] else { continue }
            reporter.failed(items[index], code: "usage", status: GetExitCode.usage, message: "\(refused.error)")
            statuses[index] = GetExitCode.usage
        }
        // Known from an earlier run: complete already, or resumed where it stopped.
        for duplicate in addition.duplicates {
            guard let index = indexOfAdded[duplicate.urlString] else { continue }
            let existing = duplicate.existingURLString
            switch continueExisting(existing, item: items[index], again: overwrite || refreshed.contains(index)) {
            case .done(let status): statuses[index] = status
            case .running(let key): itemOfTask[key] = index
            }
        }

        var remaining = Set(itemOfTask.keys)
        if !remaining.isEmpty {
            for await event in events {
                guard case .task(let taskEvent) = event, let index = itemOfTask[taskEvent.urlString],
                    remaining.contains(taskEvent.urlString)
                else { continue }
                let item = items[index]
                switch taskEvent {
                case .started(let url, let offset):
                    reporter.started(item, name: displayName(of: url, item), offset: offset)
                case .progress(_, let received, let expected):
                    reporter.progress(item, received: received, expected: expected)
                case .retrying(_, let after, let reason):
                    reporter.retrying(item, after: after, reason: reason)
                case .finished(let url, let file):
                    reporter.finished(item, path: file.path, size: fileSize(file.path), digest: verifiedDigest(of: url))
                    statuses[index] = GetExitCode.success
                    remaining.remove(url)
                case .failed(let url, let reason):
                    statuses[index] = report(reason, for: item)
                    remaining.remove(url)
                default:
                    break
                }
                if remaining.isEmpty { break }
            }
        }
        return finish(statuses)
    }

    private enum Continuation {
        case done(Int32)
        case running(String)
    }

    /// A task the store already had: report a complete file (checked against a given checksum),
    /// or download it again, or resume it.
    private func continueExisting(_ key: String, item: GetItem, again: Bool) -> Continuation {
        guard let task = manager.task(key) else { return .done(GetExitCode.unknown) }
        let wanted = item.checksum.flatMap { try? Checksum(parsing: $0) }
        let stored = task.record.checksum.flatMap { try? Checksum(parsing: $0) }
        // Another -o than the run that fetched it: a download of its own under the new name
        // (as curl's), the old file kept.
        let renamed = item.outputName.map { $0 != task.record.preferredFileName } ?? false
        if task.state == .finished, !again, !renamed, let path = manager.filePath(ofTask: key) {
            guard let wanted else {
                reporter.alreadyComplete(item, path: path, size: fileSize(path), digest: verifiedDigest(of: key))
                return .done(GetExitCode.success)
            }
            do {
                let result = try FileVerifier().verify(fileAt: path, against: wanted)
                if case .mismatch = result {
                    reporter.failed(
                        item, code: FailureReason.Code.verification.rawValue, status: GetExitCode.verification,
                        message: "\(path) is complete but \(result)")
                    return .done(GetExitCode.verification)
                }
                reporter.alreadyComplete(item, path: path, size: fileSize(path), digest: wanted.description)
                return .done(GetExitCode.success)
            } catch {
                reporter.failed(item, code: "fileSystem", status: GetExitCode.disk, message: "\(path): \(error)")
                return .done(GetExitCode.disk)
            }
        }
        let newSource = item.checksumURL != nil && item.checksumURL != task.record.checksumURL
        if (wanted != nil && wanted != stored) || newSource || task.state == .finished {
            // Another expected file (start over with the new checksum, never trusting the old
            // bytes), or --overwrite of a complete one: a new task. A finished file stays where it
            // is until the new download is complete and takes its place (the replace policy's
            // rename), so a failed overwrite loses nothing.
            _ = try? manager.deleteTasks([key], keepFinishedFile: true)
            let again = DownloadItem(
                item.url, preferredFileName: item.outputName ?? task.record.fileName, checksum: item.checksum,
                checksumURL: item.checksumURL, speedLimit: speedLimit, mirrors: item.mirrors)
            let added = (try? manager.download([again]).addition.added) ?? []
            return added.isEmpty ? .done(GetExitCode.unknown) : .running(added[0])
        }
        // This run's -o, --limit-rate and mirrors, not the ones the store kept from the last run.
        if let name = item.outputName, name != task.record.preferredFileName {
            manager.engine.setPreferredFileName(name, forTask: key)
        }
        manager.setSpeedLimit(speedLimit, forTask: key)
        _ = try? manager.engine.setMirrors(item.mirrors, forTask: key)
        _ = try? manager.resumeTasks([key])
        return .running(key)
    }

    /// Reports a failure (a kept file under --no-clobber is a skip, with its own status, 9) and
    /// returns its status.
    private func report(_ reason: FailureReason, for item: GetItem) -> Int32 {
        if reason.code == .fileExists, noClobber {
            reporter.skipped(item, because: reason.message)
            return GetExitCode.fileExists
        }
        let status = GetExitCode.code(for: reason)
        var message = reason.message
        // The library's words name its policy; here the flags that change it.
        if reason.code == .redirectRefused {
            if message.contains("from https to plain http") {
                message = "refused a redirect from https to plain http; --allow-insecure-redirect follows it"
            } else if message.contains("redirects, the last to") {
                message += " (--max-redirects)"
            }
        }
        if reason.code == .verification, deleteMismatched, reason.httpStatus == nil {
            message += "; the file was deleted"
        }
        reporter.failed(item, code: reason.code.rawValue, status: status, message: message)
        return status
    }

    private func finish(_ statuses: [Int32?]) -> Int32 {
        reporter.finish()
        try? manager.saveData()
        manager.shutDown()
        shutdownTransport()
        return statuses.first { ($0 ?? GetExitCode.success) != GetExitCode.success }.flatMap { $0 }
            ?? GetExitCode.success
    }

    // MARK: Timestamping

    /// The file here that `-N` compares with the server's: the finished file of a task the
    /// store knows, else the file the download would be named (its -o, else the URL's name).
    private func localCopy(of key: String, _ item: GetItem) -> String? {
        let path: String
        let known = manager.task(item.url) ?? manager.task(key)
        if let task = known, task.state == .finished, let finished = manager.filePath(ofTask: task.urlString) {
            path = finished
        } else if let url = try? DownloadURL(item.url) {
            let name = item.outputName.flatMap(FileNameSanitizer.cleanChosen) ?? SuggestedFileName.make(for: url)
            path = manager.downloadDirectory + "/" + name
        } else {
            return nil
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return path
    }

    /// Whether the server's copy is newer than the file at `path`, as wget's `-N` judges it: a
    /// HEAD request with `If-Modified-Since` (a 304 is no); a server that answers 200 anyway is
    /// newer when its `Last-Modified` is later or its length differs, or when it names no time.
    /// A request that fails is a yes: the download then meets the failure and reports it.
    private func serverCopy(of item: GetItem, isNewerThan path: String) async -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, let url = try? DownloadURL(item.url) else { return true }
        let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
        var request = TransferRequest(url: url, method: .head)
        request.headers.add(name: "If-Modified-Since", value: HTTPDate.format(modified))
        adapter.adapt(&request, for: TaskContext(url: url, temporaryFilePath: ""))
        let head: ResponseHead
        do {
            head = try await transport.download(request, to: DiscardingSink()).head
        } catch {
            // A transport may end an answer that is not a 2xx as a failure with its status.
            return error.httpStatus != 304
        }
        if head.status == 304 { return false }
        guard head.isSuccess, let text = head.headers.values(for: "Last-Modified").first,
            let remote = HTTPDate.parse(text)
        else { return true }
        if remote > modified { return true }
        if let length = head.contentLength, length != Int64(info.st_size) { return true }
        return false
    }

    private func displayName(of key: String, _ item: GetItem) -> String {
        manager.task(key)?.record.fileName ?? item.outputName
            ?? (try? DownloadURL(item.url).url.lastPathComponent).flatMap { $0.isEmpty ? nil : $0 } ?? item.displayURL
    }

    private func fileSize(_ path: String) -> Int64? {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : nil
    }

    /// The task's checksum when it was verified.
    private func verifiedDigest(of key: String) -> String? {
        guard let task = manager.task(key), task.record.verification == .verified else { return nil }
        return task.record.checksum.flatMap { try? Checksum(parsing: $0) }?.description
    }

    // MARK: Signals

    /// SIGINT and SIGTERM stop every transfer, let the partial files sync and their resume
    /// records reach the store, and exit with 130 or 143: the next run continues.
    ///
    /// A plain signal handler that writes the signal's number to a pipe, read on a queue of its
    /// own: a Dispatch signal source (`DispatchSource.makeSignalSource`) registers on
    /// Dispatch's manager thread after `resume()`, and a signal that came in between was lost
    /// under load (the process ran to its end).
    private func installSignalHandlers() {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { return }
        InterruptPipe.writeEnd = descriptors[1]
        let readEnd = descriptors[0]
        // A queue of its own, blocked in read(2) until a signal comes.
        DispatchQueue(label: "peregrine.get.signals").async { [weak self] in
            var byte: UInt8 = 0
            while read(readEnd, &byte, 1) < 0, errno == EINTR {}
            self?.interrupt(exitingWith: Int32(byte) == SIGINT ? GetExitCode.interrupted : GetExitCode.terminated)
        }
        // A blocked mask is inherited from whoever started this process (a thread of a test
        // runner, a service manager): unblocked here, or the signals would stay pending.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigaddset(&unblocked, SIGINT)
        sigaddset(&unblocked, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        for number in [SIGINT, SIGTERM] {
            signal(number) { received in
                var byte = UInt8(truncatingIfNeeded: received)
                _ = write(InterruptPipe.writeEnd, &byte, 1)
            }
        }
    }

    private func interrupt(exitingWith status: Int32) {
        guard !interrupted.exchange(true, ordering: .relaxed) else { return }
        reporter.finish()
        for key in manager.lists { _ = manager.stopAllTasks(in: key) }
        let deadline = ContinuousClock.now + .seconds(2)
        while manager.engine.hasTransfersInFlight, ContinuousClock.now < deadline { usleep(5_000) }
        try? manager.saveData()
        // Writes the cookie jar, as a run that ends does.
        shutdownTransport()
        printError("interrupted: run the same command again to continue")
        exit(status)
    }
}

/// Where the signal handler writes (a plain file descriptor: the handler may only make
/// async-signal-safe calls, and reads nothing else).
enum InterruptPipe {
    nonisolated(unsafe) static var writeEnd: Int32 = -1
}

/// Headers, trust, redirects and timeouts of every request. (Rates are the tasks' and the
/// manager's speed limits, which the engine hands to the transport.)
struct GetRequestAdapter: RequestAdapter {
    var headers: HTTPHeaders
    /// An input file's `header=`, `referer=` and `user-agent=` lines, by the task's URL: they
    /// replace the `--header`s of the same name.
    var itemHeaders: [String: [(name: String, value: String)]] = [:]
    var trust: TrustPolicy
    var redirects: RedirectPolicy
    var timeouts: TransferTimeouts

    func adapt(_ request: inout TransferRequest, for task: TaskContext) {
        for field in headers { request.headers.add(name: field.name, value: field.value) }
        if let own = itemHeaders[task.url.string] {
            for field in own { request.headers.remove(name: field.name) }
            for field in own { request.headers.add(name: field.name, value: field.value) }
        }
        request.trust = trust
        request.redirects = redirects
        request.timeouts = timeouts
    }
}

/// Where `peregrine get` keeps what a rerun resumes from.
enum GetState {
    /// The stores tried in turn: a second process on the same directory takes the next free one.
    static let identifiers = ["get"] + (2...16).map { "get-\($0)" }

    /// `$XDG_STATE_HOME/peregrine/get/<hash of the directory>` (`~/.local/state/…` without the
    /// variable, `/tmp/peregrine-<uid>/…` without a home).
    static func directory(for output: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        let base: String
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            base = xdg
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            base = home + "/.local/state"
        } else {
            base = "/tmp/peregrine-\(getuid())"
        }
        return base + "/peregrine/get/" + name(for: output)
    }

    /// The name of a directory's state: FNV-1a of the resolved directory, one store per output
    /// directory whatever its spelling.
    static func name(for output: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in output.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Leaves a note saying which directory a state directory belongs to, for people.
    static func describe(_ state: String, output: String) {
        let path = state + "/DIRECTORY"
        guard !FileManager.default.fileExists(atPath: path) else { return }
        try? Data((output + "\n").utf8).write(to: URL(fileURLWithPath: path))
    }
}
