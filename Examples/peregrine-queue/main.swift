import ArgumentParser
import Foundation
import Peregrine
import PeregrineCurlTransport

/// `peregrine-queue --state DIR add|run|list`: a persistent download queue on the
/// `DownloadManager` facade. Tasks and their resume records live in the JSON store under DIR,
/// files in DIR/downloads; a `run` killed at any moment continues where the store says on the
/// next `run`.
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peregrine-queue",
        abstract: "A persistent download queue: add URLs, run it (resumable after any crash), list it.",
        subcommands: [Add.self, Run.self, List.self]
    )

    @OptionGroup var options: Options

    /// Options every subcommand takes.
    struct Options: ParsableArguments {
        @Option(help: "The directory holding the queue's state and its downloads.")
        var state: String

        /// The queue's manager: the JSON store under the state directory, libcurl, nothing
        /// started until `run`.
        func manager(maxDownloadCount: Int = 4) throws -> DownloadManager {
            let configuration = DownloadManager.Configuration(
                downloadDirectory: state + "/downloads", stateDirectory: state, transport: CurlTransport(),
                flushDelay: .milliseconds(200), maxDownloadCount: maxDownloadCount,
                downloadNewFileImmediately: false)
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

        @Argument(help: "The http or https URLs to add.")
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

        func run() async throws { try await execute() }

        func execute() async throws {
            let manager = try options.manager()
            let items = urls.enumerated().map { index, url in
                DownloadItem(url, checksum: checksums.isEmpty ? nil : checksums[index])
            }
            let (addition, _) = try manager.download(items)
            for url in addition.added { print("added \(url)") }
            for duplicate in addition.duplicates {
                print("skipped \(duplicate.urlString): already queued as \(duplicate.existingURLString)")
            }
            for invalid in addition.invalid { printError("invalid \(invalid.urlString): \(invalid.error)") }
            try manager.saveData()
            if !addition.invalid.isEmpty { throw ExitCode(2) }
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download every pending, stopped or failed task; exit 0 when all are finished.")

        @OptionGroup var options: Options

        @Option(help: "How many downloads run at once.")
        var parallel: Int = 4

        func run() async throws { try await execute() }

        func execute() async throws {
            let manager = try options.manager(maxDownloadCount: parallel)
            // The store keeps the limit of the last run; this run's flag wins.
            manager.maxDownloadCount = parallel
            for url in manager.restoredAfterForcedQuit {
                say("recovered \(url): \(describe(manager.downloadState(ofTask: url)))")
            }
            let events = manager.events()
            let unfinished = manager.downloadList.flatMap { $0 }.filter {
                manager.downloadState(ofTask: $0) != .finished
            }
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
                case .finished(let url, let path):
                    say("finished \(url) -> \(path)")
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
        static let configuration = CommandConfiguration(abstract: "List the queue's tasks and their states.")

        @OptionGroup var options: Options

        func run() async throws { try await execute() }

        func execute() async throws {
            let manager = try options.manager()
            for url in manager.downloadList.flatMap({ $0 }) {
                let detail = manager.downloadDetail(ofTask: url).map { " \($0)" } ?? ""
                print("\(describe(manager.downloadState(ofTask: url)))\t\(url)\(detail)")
            }
        }
    }
}

/// A state as one word (and the reason of a failure).
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

// `main.swift` cannot hold an `@main` type, and from top-level code `QueueCommand.main()`
// resolves to the synchronous entry point: parse, and run the subcommand here.
do {
    var command = try QueueCommand.parseAsRoot()
    switch command {
    case let add as QueueCommand.Add: try await add.execute()
    case let run as QueueCommand.Run: try await run.execute()
    case let list as QueueCommand.List: try await list.execute()
    default: try command.run()
    }
} catch {
    QueueCommand.exit(withError: error)
}

/// Prints a line and flushes it at once, also into a pipe or a file: a line printed is a line
/// kept, even when the process is killed right after (the crash tests read these lines).
func say(_ line: String) {
    print(line)
    fflush(nil)
}
