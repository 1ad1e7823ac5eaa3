import ArgumentParser
import Foundation
import Logging
import Peregrine
import PeregrineAuth
import PeregrineCurlTransport
import PeregrineTransport
import Synchronization

/// `peregrine-queue --state DIR add|run|list|remove|retry|clear`: a persistent download queue on
/// the `DownloadManager` facade. Tasks and their resume records live in the JSON store under DIR,
/// files in DIR/downloads; a `run` killed at any moment continues where the store says on the
/// next `run`.
@main
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peregrine-queue",
        abstract: "A persistent download queue: add URLs, run it (resumable after any crash), list it.",
        discussion: "Results go to standard output; log lines and failures to standard error.",
        subcommands: [Add.self, Run.self, List.self, Remove.self, Retry.self, Clear.self]
    )

    @OptionGroup var options: Options

    /// Options every subcommand takes.
    struct Options: ParsableArguments {
        @Option(help: "The directory holding the queue's state and its downloads.")
        var state: String

        /// The queue's manager: the JSON store under the state directory, libcurl, nothing
        /// started until `run`. Only `add` makes a missing state directory.
        func manager(
            maxDownloadCount: Int = 4, creating: Bool = false, transport: any Transport = CurlTransport()
        ) throws -> DownloadManager {
            var isDirectory: ObjCBool = false
            if !creating, !FileManager.default.fileExists(atPath: state, isDirectory: &isDirectory) {
                throw ValidationError("no queue in \(state): the directory does not exist (add URLs first)")
            }
            // Logs go to standard error, never into a listing on standard output.
            var logger = Logger(label: "peregrine.queue") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = .warning
            var configuration = DownloadManager.Configuration(
                downloadDirectory: state + "/downloads", stateDirectory: state, transport: transport,
                flushDelay: .milliseconds(200))
            configuration.maxDownloadCount = maxDownloadCount
            configuration.downloadNewFileImmediately = false
            configuration.logger = logger
            do {
                return try DownloadManager(identifier: "queue", configuration: configuration)
            } catch {
                throw ValidationError("cannot open the queue in \(state): \(error)")
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add URLs to the queue (nothing is downloaded).")

        @OptionGroup var options: Options

        @Argument(
            help: ArgumentHelp(
                "The http or https URLs to add.",
                discussion:
                    "Credentials in a URL (https://user:secret@host/…) are taken out and never stored: give them to run with --user."
            ))
        var urls: [String]

        @Option(
            name: .customLong("checksum"),
            help: ArgumentHelp(
                "The expected digest as ALGORITHM=HEX, once per URL in the order of the URLs.",
                valueName: "algorithm=hex"))
        var checksums: [String] = []

        func validate() throws {
            guard checksums.isEmpty || checksums.count == urls.count else {
                throw ValidationError("give one --checksum per URL (\(urls.count)), or none")
            }
        }

        func run() async throws {
            let manager = try options.manager(creating: true)
            let items = urls.enumerated().map { index, raw in
                let (url, credential) = URLUserInformation.split(raw)
                if credential != nil {
                    printError(
                        "note: the credentials in \(URLUserInformation.redacted(raw)) are not stored; give them to run with --user"
                    )
                }
                return DownloadItem(url, checksum: checksums.isEmpty ? nil : checksums[index])
            }
            let (addition, _) = try manager.download(items)
            for url in addition.added { say("added \(url)") }
            for duplicate in addition.duplicates {
                say("skipped \(duplicate.urlString): already queued as \(duplicate.existingURLString)")
            }
            // Every URL not queued is named, and the status says so.
            for invalid in addition.invalid { printError("invalid \(invalid.urlString): \(invalid.error)") }
            for refused in addition.invalidChecksums {
                printError("not queued \(refused.urlString): checksum \(refused.checksum): \(refused.error)")
            }
            try manager.saveData()
            if !addition.invalid.isEmpty || !addition.invalidChecksums.isEmpty { throw ExitCode(2) }
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download every pending, stopped or failed task; exit 0 when all are finished.")

        @OptionGroup var options: Options

        @Option(help: "How many downloads run at once.")
        var parallel: Int = 4

        @Option(
            name: [.customShort("u"), .long],
            help: ArgumentHelp(
                "Credentials as NAME:PASSWORD, answered to the Basic or Digest challenges of the queued URLs' hosts.",
                valueName: "name:password"))
        var user: String?

        @Flag(help: "Allow the credentials over plain http (they are sent only over https otherwise).")
        var authOverHTTP = false

        func validate() throws {
            if let user, !user.contains(":") { throw ValidationError("--user takes NAME:PASSWORD") }
            guard parallel >= 1 else { throw ValidationError("--parallel must be at least 1") }
        }

        func run() async throws {
            let curl = CurlTransport()
            let transport = BoundLaterTransport(curl)
            let manager = try options.manager(maxDownloadCount: parallel, transport: transport)
            if let user, let colon = user.firstIndex(of: ":") {
                // Bound to the origins of the queued URLs only, answering their challenges: never
                // sent unasked, never to another host a redirect leads to.
                let credential = Credential(
                    user: String(user[..<colon]), password: String(user[user.index(after: colon)...]))
                let credentials = CredentialStore()
                var hosts: Set<String> = []
                for task in manager.engine.tasks() {
                    guard let url = try? DownloadURL(task.urlString) else { continue }
                    credentials.set(credential, for: ProtectionSpace(url: url))
                    hosts.insert(url.host)
                }
                transport.bind(
                    AuthenticatingTransport(
                        wrapping: curl, credentials: credentials,
                        configuration: AuthenticatingTransport.Configuration(
                            plainHTTPHosts: authOverHTTP ? hosts : [])))
            }
            // The store keeps the limit of the last run; this run's flag wins.
            manager.maxDownloadCount = parallel
            for url in manager.restoredAfterForcedQuit {
                say("recovered \(url): \(describe(manager.downloadState(ofTask: url)))")
            }
            let events = manager.events()
            let all = manager.downloadList.flatMap { $0 }
            // A rerun reports what earlier runs downloaded (and fetches none of it again).
            for url in all where manager.downloadState(ofTask: url) == .finished {
                say("finished \(url) -> \(manager.fileURL(ofTask: url)?.path ?? "?") (earlier)")
            }
            let unfinished = all.filter { manager.downloadState(ofTask: $0) != .finished }
            guard !unfinished.isEmpty else {
                say("nothing to download")
                return
            }
            var remaining = Set(unfinished)
            var failures: [String: FailureReason] = [:]
            var lastPrinted: [String: ContinuousClock.Instant] = [:]
            let started = manager.resumeAllTasks()
            // A task the engine refused (none should be) would never end: count it as failed.
            for url in remaining where !started.contains(url) {
                failures[url] = FailureReason(.unknown, message: "could not be started")
                remaining.remove(url)
            }
            for await event in events {
                guard case .task(let taskEvent) = event, remaining.contains(taskEvent.urlString) else { continue }
                switch taskEvent {
                case .started(let url, let offset):
                    say(offset > 0 ? "resume \(url) from byte \(offset)" : "start \(url)")
                case .progress(let url, let received, let expected):
                    let now = ContinuousClock.now
                    if let last = lastPrinted[url], now - last < .seconds(1) { break }
                    lastPrinted[url] = now
                    let total = expected.map { " of \($0)" } ?? ""
                    say("progress \(url) \(received)\(total) bytes")
                case .retrying(let url, let after, let reason):
                    say("retry \(url) after \(after): \(reason)")
                case .finished(let url, let file):
                    say("finished \(url) -> \(file.path)")
                    remaining.remove(url)
                case .failed(let url, let reason):
                    failures[url] = reason
                    remaining.remove(url)
                default:
                    break
                }
                if remaining.isEmpty { break }
            }
            try? manager.saveData()
            guard failures.isEmpty else {
                for (url, reason) in failures.sorted(by: { $0.key < $1.key }) { printError("failed \(url): \(reason)") }
                throw ExitCode(1)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the tasks in the order they were added: state, URL, progress, local path.")

        @OptionGroup var options: Options

        @Flag(help: "One JSON object per task.")
        var json = false

        func run() async throws {
            let manager = try options.manager()
            // Added in one call, tasks share a date: their queue position breaks the tie.
            let tasks = manager.engine.tasks().sorted {
                ($0.record.addedAt, $0.listPosition) < ($1.record.addedAt, $1.listPosition)
            }
            for task in tasks {
                let url = task.urlString
                let path = manager.filePath(ofTask: url)
                let expected = task.record.expectedLength
                let state = describe(task.state)
                if json {
                    var object: [String: Any] = [
                        "state": state, "url": url, "received": task.receivedBytes,
                        "added": task.record.addedAt.timeIntervalSince1970,
                    ]
                    if let expected { object["expected"] = expected }
                    if let path { object["path"] = path }
                    if case .failed(let reason) = task.state {
                        object["code"] = reason.code.rawValue
                        object["message"] = reason.message
                    }
                    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                    say(String(decoding: data, as: UTF8.self))
                } else {
                    let progress =
                        expected.map { "\(task.receivedBytes)/\($0)" }
                        ?? (task.receivedBytes > 0 ? "\(task.receivedBytes)" : "-")
                    var line = "\(state)\t\(url)\t\(progress)\t\(path ?? "-")"
                    if case .failed(let reason) = task.state { line += "\t\(reason)" }
                    say(line)
                }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove tasks from the queue (their partial files too; finished files stay).")

        @OptionGroup var options: Options

        @Argument(help: "The URLs to remove.")
        var urls: [String]

        func run() async throws {
            let manager = try options.manager()
            let urls = urls.map { URLUserInformation.split($0).url }
            let known = urls.filter { manager.task($0) != nil }
            for url in urls where !known.contains(url) { printError("not in the queue: \(url)") }
            let removed = try manager.deleteTasks(known, keepFinishedFile: true)
            for url in known where removed[url] != nil { say("removed \(url)") }
            try manager.saveData()
            if known.count != urls.count { throw ExitCode(2) }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make failed tasks (all, or the URLs given) pending again; the next run downloads them.")

        @OptionGroup var options: Options

        @Argument(help: "The URLs to retry; every failed task when none is given.")
        var urls: [String] = []

        func run() async throws {
            let manager = try options.manager()
            let failed = manager.engine.tasks().filter {
                if case .failed = $0.state { true } else { false }
            }.map(\.urlString)
            let chosen = urls.isEmpty ? failed : urls.map { URLUserInformation.split($0).url }
            for url in chosen where !failed.contains(url) { printError("not a failed task: \(url)") }
            let targets = chosen.filter { failed.contains($0) }
            // Taken out and added again, pending from zero with the same checksum: a partial file
            // the failure may have left wrong is never trusted, and nothing starts before `run`.
            let items = targets.compactMap { url -> DownloadItem? in
                guard let record = manager.task(url)?.record else { return nil }
                return DownloadItem(
                    url, preferredFileName: record.preferredFileName, checksum: record.checksum,
                    checksumURL: record.checksumURL, verificationRetry: record.verificationRetry)
            }
            _ = try manager.deleteTasks(targets)
            let added = try manager.download(items).addition.added
            for url in added { say("pending \(url)") }
            try manager.saveData()
            if added.count != chosen.count { throw ExitCode(2) }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove finished tasks from the queue (their files stay); --all removes every task.")

        @OptionGroup var options: Options

        @Flag(help: "Remove every task, finished or not (partial files are deleted, finished files stay).")
        var all = false

        func run() async throws {
            let manager = try options.manager()
            let urls = manager.engine.tasks().filter { all || $0.state == .finished }.map(\.urlString)
            let removed = try manager.deleteTasks(urls, keepFinishedFile: true)
            say("removed \(removed.count) task\(removed.count == 1 ? "" : "s")")
            try manager.saveData()
        }
    }
}

/// A state as one word.
func describe(_ state: DownloadState) -> String {
    switch state {
    case .notInList: "unknown"
    case .pending: "pending"
    case .downloading: "downloading"
    case .paused: "paused"
    case .stopped: "stopped"
    case .finished: "finished"
    case .failed: "failed"
    }
}

/// Writes a line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Prints a line and flushes it at once, also into a pipe or a file: a line printed is a line
/// kept, even when the process is killed right after (the crash tests read these lines).
func say(_ line: String) {
    print(line)
    fflush(nil)
}

/// A transport chosen once the queue is loaded: `run` binds the credentials it was given to the
/// origins of the queued tasks, which only the loaded queue knows. Bound before any transfer
/// starts, so that every transfer is paused, resumed and cancelled where it started.
final class BoundLaterTransport: Transport {
    private let current: Mutex<any Transport>

    init(_ transport: any Transport) { current = Mutex(transport) }

    func bind(_ transport: any Transport) { current.withLock { $0 = transport } }

    private var transport: any Transport { current.withLock { $0 } }

    func start(
        _ request: TransferRequest, sink: any TransferSink, events: @escaping @Sendable (TransferEvent) -> Void
    ) -> TransferID {
        transport.start(request, sink: sink, events: events)
    }

    func pause(_ id: TransferID) { transport.pause(id) }
    func resume(_ id: TransferID) { transport.resume(id) }
    func cancel(_ id: TransferID) { transport.cancel(id) }
    var eventsShareOneThread: Bool { transport.eventsShareOneThread }
}
