import PeregrineCore
import PeregrineTransport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension DownloadEngine {
    /// A task's state; `DownloadState.notInList` for an unknown URL string.
    public func state(ofTask urlString: String) -> DownloadState {
        state.withLock { $0.tasks[urlString]?.machine.state ?? .notInList }
    }

    /// Whether a task waits in its list's queue.
    public func isWaiting(_ urlString: String) -> Bool {
        state.withLock { $0.tasks[urlString]?.machine.isWaiting ?? false }
    }

    /// A task as it is now, or nil for an unknown URL string.
    public func task(_ urlString: String) -> DownloadTaskSnapshot? {
        state.withLock { state in state.tasks[urlString].map(Self.snapshot) }
    }

    /// The tasks of a list (or of every list) in list order.
    public func tasks(in list: DownloadListKey? = nil) -> [DownloadTaskSnapshot] {
        state.withLock { state in state.keys(in: list).compactMap { state.tasks[$0].map(Self.snapshot) } }
    }

    /// Every task's URL string, state and whether it waits in its list's queue, in list order:
    /// what a caller that groups tasks by state needs, without copying their records (a
    /// snapshot carries the whole record; with 10,000 tasks, 10 MB a pass).
    public func states(in list: DownloadListKey? = nil) -> [TaskStateSummary] {
        state.withLock { state in
            state.keys(in: list).compactMap { key in
                state.tasks[key].map {
                    TaskStateSummary(urlString: key, state: $0.machine.state, isQueued: $0.machine.isQueued)
                }
            }
        }
    }

    /// The URL strings of a list's tasks (or of every task) in list order.
    public func urlStrings(in list: DownloadListKey? = nil) -> [String] {
        state.withLock { $0.keys(in: list) }
    }

    /// Reports the tasks' current records to the ``TaskRecordObserver`` again, as changes with
    /// new sequence numbers: for a layer whose stored form of a task changed beside the record
    /// (the facade's display name and meta info). Unknown URL strings are ignored.
    package func reportRecords(_ urlStrings: [String]) {
        perform { state, effects in
            for url in urlStrings where state.tasks[url] != nil { effects.markDirty(url) }
        }
    }

    /// The records of every task in list order: what a store saves as a snapshot.
    public func records() -> [DownloadTaskRecord] {
        state.withLock { state in state.keys(in: nil).compactMap { state.tasks[$0]?.record } }
    }

    /// The tasks waiting in a list's queue, first to start first.
    public func waitingTasks(in list: DownloadListKey = .default) -> [String] {
        state.withLock { state in
            state.keys(in: list).filter { state.tasks[$0]?.machine.isWaiting == true }
        }
    }

    /// The tasks holding a slot of a list (downloading, or paused with their connection), in list order.
    public func slotHolders(in list: DownloadListKey = .default) -> [String] {
        state.withLock { state in
            state.keys(in: list).filter { state.tasks[$0]?.machine.holdsSlot == true }
        }
    }

    /// The finished file's absolute path; nil unless the task is finished and the file exists.
    public func filePath(ofTask urlString: String) -> String? {
        let name = state.withLock { state -> String? in
            guard let entry = state.tasks[urlString], entry.machine.state == .finished else { return nil }
            return entry.record.fileName
        }
        guard let name, directory.exists(name) else { return nil }
        return directory.location(of: name)
    }

    /// The finished file's URL; nil unless the task is finished and the file exists.
    public func fileURL(ofTask urlString: String) -> URL? {
        filePath(ofTask: urlString).map { URL(filePath: $0, directoryHint: .notDirectory) }
    }

    /// Whether the task is finished and its file exists.
    public func isFileExisted(ofTask urlString: String) -> Bool { filePath(ofTask: urlString) != nil }

    /// The absolute path of the task's temporary file (which may not exist yet).
    public func temporaryFilePath(ofTask urlString: String) -> String? {
        state.withLock { $0.tasks[urlString]?.record.temporaryFileName }.flatMap(directory.location(of:))
    }

    /// The name to show: the file's name (from the server once it answered, else from the
    /// URL), without its extension when ``hiddenFileExtension`` is on; nil for an unknown task.
    public func fileDisplayName(ofTask urlString: String) -> String? {
        state.withLock { state -> String? in
            guard let entry = state.tasks[urlString] else { return nil }
            let name =
                entry.record.baseFileName ?? entry.record.preferredFileName.flatMap(FileNameSanitizer.cleanChosen)
                ?? SuggestedFileName.make(for: entry.url)
            guard state.hiddenFileExtension, let dot = name.lastIndex(of: "."), dot != name.startIndex else {
                return name
            }
            return String(name[..<dot])
        }
    }

    /// The kind of the task's file, from the configured classifier; nil for an unknown task.
    public func fileKind(ofTask urlString: String) -> FileKind? {
        let details = state.withLock { state -> (String, String?)? in
            guard let entry = state.tasks[urlString] else { return nil }
            return (entry.record.baseFileName ?? SuggestedFileName.make(for: entry.url), entry.record.mimeType)
        }
        return details.map { configuration.fileKindClassifier($0.0, $0.1) }
    }

    /// The file's size in bytes; -1 when unknown or for an unknown task.
    public func fileByteCount(ofTask urlString: String) -> Int64 {
        state.withLock { $0.tasks[urlString]?.record.expectedLength ?? -1 }
    }

    /// The bytes of the file received so far; -1 for an unknown task.
    public func receivedByteCount(ofTask urlString: String) -> Int64 {
        state.withLock { $0.tasks[urlString]?.receivedBytes ?? -1 }
    }

    /// Progress in 0…1: 1 when finished, 0 when the size is unknown, -1 for an unknown task.
    /// A `Double`, as every progress fraction in Peregrine (SDE's was a `Float`).
    public func downloadProgress(ofTask urlString: String) -> Double {
        state.withLock { state in
            guard let entry = state.tasks[urlString] else { return -1 }
            if entry.machine.state == .finished { return 1 }
            guard let expected = entry.record.expectedLength, expected > 0 else { return 0 }
            return min(1, Double(entry.receivedBytes) / Double(expected))
        }
    }

    /// SDE's download detail: `41.6 MB/402.5 MB` while unfinished, `402.5 MB` when finished,
    /// the reason when failed; nil while downloading (see activity tracking) or for an
    /// unknown task.
    public func downloadDetail(ofTask urlString: String) -> String? {
        state.withLock { state in state.tasks[urlString].flatMap(Self.detail) }
    }

    static func detail(of entry: TaskEntry) -> String? {
        switch entry.machine.state {
        case .notInList, .downloading: nil
        case .failed(let reason): reason.description
        case .finished:
            ByteCountText.detail(
                receivedBytes: entry.receivedBytes, expectedBytes: entry.record.expectedLength, isFinished: true)
        case .pending, .paused, .stopped:
            ByteCountText.detail(
                receivedBytes: entry.receivedBytes, expectedBytes: entry.record.expectedLength, isFinished: false)
        }
    }

    /// Whether any transfer runs or still drains: after a stop, its partial file is synced and
    /// its resume record updated only once the transfer has drained, and the record observer
    /// (the store) has the update only once the section that made it has handed it over. A
    /// program that stops everything and exits waits for this to turn false (then saves the
    /// store).
    public var hasTransfersInFlight: Bool {
        // Read under the lock: a section that ended the last attempt counted itself there.
        state.withLock { state in
            state.tasks.values.contains { $0.attempt != nil } || unrecordedSections.load(ordering: .acquiring) > 0
        }
    }

    /// Waits until no transfer runs or drains (``hasTransfersInFlight`` is false), for at most
    /// `limit`; returns whether they all drained. A program that stops its tasks before it exits
    /// awaits this before saving its store, so that every partial file is synced and its resume
    /// record holds the bytes on disk.
    public func waitUntilTransfersDrain(atMost limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while hasTransfersInFlight {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    static func snapshot(_ entry: TaskEntry) -> DownloadTaskSnapshot {
        DownloadTaskSnapshot(
            record: entry.record, receivedBytes: entry.receivedBytes, isQueued: entry.machine.isQueued,
            listPosition: entry.rank, retryCount: entry.retryCount, mismatchCount: entry.mismatchCount,
            retryAt: entry.retryAt, droppedURLs: entry.droppedURLs)
    }

    // MARK: Asking the server

    /// The file's size, asking the server with a HEAD request first when it is not known yet
    /// (as SDE does); the answer's type, validators and suggested name are kept too.
    ///
    /// - Returns: the size, or -1 when the server does not tell it, the request fails, or the
    ///   task is unknown.
    public func fetchFileByteCount(ofTask urlString: String) async -> Int64 {
        guard
            let (url, known, checksum, list) = state.withLock({
                state -> (DownloadURL, Int64?, String?, DownloadListKey)? in
                state.tasks[urlString].map { ($0.url, $0.record.expectedLength, $0.record.checksum, $0.record.list) }
            })
        else { return -1 }
        if let known { return known }
        var request = TransferRequest(url: url, method: .head)
        let context = TaskContext(
            url: url, list: list, checksum: checksum, temporaryFilePath: "", startOffset: 0, retryCount: 0,
            previousFailure: nil)
        configuration.requestAdapter?.adapt(&request, for: context)
        let head: ResponseHead
        do {
            head = try await transport.download(request, to: DiscardingSink()).head
        } catch {
            return -1
        }
        return perform { state, effects in
            guard state.tasks[urlString] != nil else { return -1 }
            var record = state.tasks[urlString]!.record
            if record.expectedLength == nil { record.expectedLength = head.contentLength }
            if record.mimeType == nil { record.mimeType = head.mimeType }
            if record.fileName == nil, let disposition = head.headers["Content-Disposition"] {
                record.fileName = record.inSubdirectory(
                    SuggestedFileName.make(contentDisposition: disposition, effectiveURL: head.effectiveURL, url: url))
            }
            state.tasks[urlString]!.record = record
            effects.markDirty(urlString)
            return record.expectedLength ?? -1
        }
    }
}

/// A task's URL string and state (``DownloadEngine/states(in:)``).
public struct TaskStateSummary: Sendable, Hashable {
    /// The task's URL string.
    public var urlString: String
    /// Its state.
    public var state: DownloadState
    /// Whether it waits in its list's queue (``DownloadTaskSnapshot/isQueued``).
    public var isQueued: Bool

    /// A summary.
    public init(urlString: String, state: DownloadState, isQueued: Bool) {
        self.urlString = urlString
        self.state = state
        self.isQueued = isQueued
    }
}
