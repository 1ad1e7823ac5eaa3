import Dispatch
import PeregrineCore
import PeregrineTransport

/// One task inside the engine.
///
/// A class so that a transition changes it in place — a struct in the dictionary would be
/// copied out and back on every change. Only touched under the engine's lock.
final class TaskEntry: @unchecked Sendable {
    var url: DownloadURL
    var record: DownloadTaskRecord
    var machine: TaskStateMachine
    /// Position in its list's order; smaller comes first.
    var rank: Int64
    /// Bytes of the file received (live while downloading).
    var receivedBytes: Int64
    /// The transfer running or draining, if any.
    var attempt: TransferAttempt?
    /// A transfer was asked for while the previous one still drained.
    var startWhenDrained = false
    /// The handler given with the last download or resume call.
    var completion: TaskCompletionHandler?
    /// Retries since the user's last action.
    var retryCount = 0
    /// The failure that the next attempt retries.
    var previousFailure: TransferFailure? {
        get { previousFailureBox?.failure }
        set { previousFailureBox = newValue.map(FailureBox.init) }
    }
    /// `previousFailure` out of line: a failure is about 490 bytes (a request and a response
    /// head), which every entry would carry inline although few tasks ever hold one (with
    /// 10,000 tasks, 5 MB).
    private var previousFailureBox: FailureBox?
    /// Downloads that ended with a checksum mismatch since the user's last action.
    var mismatchCount = 0
    /// When (on the engine's clock) a waiting retry starts the next transfer; nil when none waits.
    var retryAt: Duration?
    /// Changes with every waiting retry, so that a timer knows whether it is still the current one.
    var retryGeneration: UInt64 = 0
    /// The task's own bandwidth limiter, made at its first transfer; its limit is the record's.
    var limiter: BandwidthLimiter?
    /// URLs of the task (its own, mirrors) dropped since the user's last action, with why.
    var droppedURLs: [String: FailureReason] = [:]
    /// A checksum mismatch came from bytes of several sources: until the user's next action,
    /// each transfer uses one source, so that a mismatch names the source that sent it.
    var usesOneSource = false

    /// The URLs to download from, in order: the task's own, then its mirrors, less the dropped
    /// ones — empty when every one was dropped (the task's own URL is then used alone, under
    /// the retry policy).
    var usableSources: [DownloadURL] {
        guard !record.mirrors.isEmpty else { return droppedURLs[url.string] == nil ? [url] : [] }
        return ([url] + record.mirrors.compactMap { try? DownloadURL($0) }).filter { droppedURLs[$0.string] == nil }
    }

    init(url: DownloadURL, record: DownloadTaskRecord, machine: TaskStateMachine, rank: Int64, receivedBytes: Int64) {
        self.url = url
        self.record = record
        self.machine = machine
        self.rank = rank
        self.receivedBytes = receivedBytes
    }
}

/// Everything an engine's lock protects.
struct EngineState: Sendable {
    var tasks: [String: TaskEntry] = [:]
    /// `DownloadURL.normalizedKey` → the task's key, for duplicates.
    var keysByNormalizedKey: [String: String] = [:]
    var lists: [DownloadListKey: SchedulingList] = [:]
    /// Each list's bandwidth limiter, made at the first transfer or limit of the list.
    var listLimiters: [DownloadListKey: BandwidthLimiter] = [:]
    var defaultLimit: Int
    var pauseBySuspending: Bool
    var downloadNewFileImmediately: Bool
    var hiddenFileExtension: Bool
    var conflictPolicy: FileConflictPolicy
    var isShutDown = false
    /// Whether waiting tasks are held (``DownloadEngine/holdsWaitingTasks``).
    var holdsWaiting = false
    var nextRank: Int64 = 0
    var nextCommand: UInt64 = 0
    var nextAttempt: UInt64 = 0
    /// The last number given to a locked section with something for the observers: its record
    /// changes' ``TaskRecordChange/sequence`` and its events' section number.
    var nextRecordSequence: UInt64 = 0
    /// The section the steps nested in the current outer step gather their effects in.
    var merged: MergedSection?
    /// Temporary names are `base + n × odd constant`: distinct for every n (an odd factor is a
    /// bijection modulo 2⁶⁴), random across engines, and no system call per task.
    let temporaryNameBase = UInt64.random(in: 0...UInt64.max)
    var temporaryNameCount: UInt64 = 0
    var nameCounters: [String: Int] = [:]
    /// Temporary names still linked to placed files, by temporary name, until their records are
    /// durable (see ``DownloadEngine/removePlacedTemporaryNames()``).
    var leftoverLinks: [String: LeftoverLink] = [:]
    /// Whether those names stay until ``DownloadEngine/releasePlacedTemporaryName(ofTask:)``
    /// (``DownloadEngine/holdsPlacedTemporaryNames``).
    var holdsPlacedTemporaryNames = false
    var taskCompletionHandler: TaskCompletionHandler?
    // Activity tracking.
    var tracker: ActivityTracker
    var activityHandler: (@Sendable (ActivityReport) -> Void)?
    var activityCompletionHandler: (@Sendable () -> Void)?
    var trackingTimer: TrackingTimer?

    /// A fresh temporary file name.
    mutating func temporaryName() -> String {
        temporaryNameCount += 1
        return DownloadDirectory.temporaryName(temporaryNameBase &+ temporaryNameCount &* 0x9E37_79B9_7F4A_7C15)
    }

    /// The next sequence number for a transfer command.
    mutating func commandSequence() -> UInt64 {
        nextCommand += 1
        return nextCommand
    }

    /// Keys of a list (or of all lists) in list order.
    func keys(in list: DownloadListKey?) -> [String] {
        tasks.values.lazy.filter { list == nil || $0.record.list == list }.sorted {
            ($0.rank, $0.record.urlString) < ($1.rank, $1.record.urlString)
        }
        .map(\.record.urlString)
    }
}

/// A repeating timer; a box so that the state stays `Sendable`.
final class TrackingTimer: @unchecked Sendable {
    let source: any DispatchSourceTimer
    init(_ source: any DispatchSourceTimer) { self.source = source }
    func cancel() { source.cancel() }
}

/// What a locked section decided to do once the lock is released, in order.
struct Effects: Sendable {
    var events: [EngineEvent] = []
    var commands: [(attempt: TransferAttempt, command: TransferAttempt.Command, sequence: UInt64)] = []
    var launches: [TransferAttempt] = []
    var callbacks: [@Sendable () -> Void] = []
    var refill: Set<DownloadListKey> = []
    var dirtyKeys: [String] = []
    var dirtySet: Set<String> = []
    var recordChanges: [TaskRecordChange] = []
    /// The section's number for the observers (see ``EngineEventObserver``); nil when it hands
    /// them nothing.
    var section: UInt64?
    var syncDirectory = false
    /// Folders inside the download directory that files were placed in, synced with it.
    var placedFolders: Set<String> = []
    /// Temporary names still linked to files placed in this section (task, temporary name,
    /// placed name): removed once the records saying where the files went are durable.
    var leftoverLinks: [LeftoverLink] = []
    /// Work to schedule on the engine's clock after the lock (waiting retries).
    var timers: [(delay: Duration, work: @Sendable () -> Void)] = []
    /// What hands the section to the ``EngineSectionObserver`` after the step (taken in it).
    var handOver: (@Sendable () -> (@Sendable () -> Void)?)?
    /// Whether record changes are collected (only when a ``TaskRecordObserver`` listens).
    var tracksRecords = false

    mutating func markDirty(_ key: String) {
        guard tracksRecords else { return }
        // A step marks one or two tasks: a scan of those (equal keys share storage, so most
        // comparisons are a pointer's) costs less than hashing the URL; a set takes over for
        // steps over many tasks.
        if dirtyKeys.count < Self.dirtyScanLimit {
            guard !dirtyKeys.contains(key) else { return }
            dirtyKeys.append(key)
            if dirtyKeys.count == Self.dirtyScanLimit { dirtySet = Set(dirtyKeys) }
        } else if dirtySet.insert(key).inserted {
            dirtyKeys.append(key)
        }
    }

    private static let dirtyScanLimit = 16
}

/// The effects of the steps nested in one outer step (see `DownloadEngine.perform`). Touched by
/// the thread inside the step, then by the same thread running the step's outbox.
final class MergedSection: @unchecked Sendable {
    var effects = Effects()
    /// The outer step ended and sealed the section: it runs from the outbox.
    var isSealed = false
}

/// A temporary name still linked to the file placed from it, until the task's record is durable.
struct LeftoverLink: Sendable, Hashable {
    var task: String
    var temporaryName: String
    var placedName: String
}

/// A ``TransferFailure`` on the heap (``TaskEntry/previousFailure``).
private final class FailureBox: Sendable {
    let failure: TransferFailure

    init(_ failure: TransferFailure) { self.failure = failure }
}
