import PeregrineChecksums
import PeregrineCore
import PeregrineTransport
import Synchronization

/// One transfer of a task, from its start to its completion event.
///
/// A task has at most one attempt at a time: a new one starts only after the previous one
/// delivered its completion (it *drained*), so two transfers never write the same temporary
/// file. The attempt owns that file meanwhile: deleting it is deferred to the drain.
///
/// Control (suspend, continue, cancel) may be asked for from any thread, before the transport
/// even returned the transfer's identifier; requests carry a sequence number given under the
/// engine's lock, so that two requests racing outside it apply in the order the engine
/// decided them. Cancelling is final.
final class TransferAttempt: @unchecked Sendable {
    /// What the engine wants the transfer to do.
    enum Command: Sendable, Hashable {
        case run
        case suspend
        case cancel
    }

    /// What to do when a cancelled attempt drains.
    enum Disposition: Sendable, Hashable {
        /// Sync the partial file and record its offset for a resume.
        case keepPartialFile
        /// Delete the partial file.
        case discardPartialFile
        /// The destination exists and the conflict policy is skip: fail the task.
        case skipExisting
        /// Fail the task with this reason.
        case fail(FailureReason)
    }

    private struct Control {
        var id: TransferID?
        /// The transfer over several connections, once launched (instead of `id`).
        var segmented: SegmentedTransfer?
        var lastSequence: UInt64 = 0
        var command = Command.run
        var disposition: Disposition?
    }

    /// Unique within the engine.
    let number: UInt64
    let url: DownloadURL
    let temporaryName: String
    let temporaryPath: String
    /// The byte this transfer starts at.
    let startOffset: Int64
    /// The record it resumes from, if any.
    let resumeRecord: ResumeRecord?
    /// What plug-ins learn; its checksum is filled in once a checksum file was fetched.
    var context: TaskContext
    /// The checksum file to fetch before the transfer, when the task has no checksum yet.
    let checksumURL: DownloadURL?
    /// What a mismatch leads to for this task.
    let verificationRetry: VerificationRetryPolicy
    /// Mismatches of the task before this attempt.
    let mismatchesBefore: Int
    private let control = Locked(Control())

    // Used by the thread that launches the attempt, then only by the transport's thread that
    // delivers its events (serially); never concurrently.
    var request: TransferRequest?
    /// The task's, its list's and the engine's bandwidth limiters, set before launch.
    var limiters: [BandwidthLimiter] = []
    var sink: TemporaryFileSink?
    /// The partial file's lock when launching took it (a resume cuts the file first); a fresh
    /// file is locked by its sink instead.
    var partFileLock: PartFileLock?
    /// Whether another writer held the partial file: the attempt ended without touching it.
    var partFileBusy = false
    var transferSink: (any TransferSink)?
    var head: ResponseHead?
    /// The file's complete length from the head, parsed once.
    var completeLength: Int64?
    var isResumable = false
    var receivedBytes: Int64 = 0
    var lastCheckpointTime: Duration = .zero
    var lastCheckpointBytes: Int64 = 0
    /// The bytes counted (`startOffset` + received) at the last checkpoint: a segmented
    /// transfer's durable prefix can lag behind them, so checkpoints are paced on these.
    var lastCheckpointTotal: Int64 = 0
    var lastProgressEvent: Duration?
    /// The URL the transfer asks first: the task's own, or a mirror once the task's was dropped.
    var source: DownloadURL
    /// The task's other URLs in use, for further connections (none while the task uses one
    /// source at a time).
    var mirrors: [DownloadURL] = []
    /// The task's other URLs not dropped: where the next transfer may go when this one's fails.
    var alternatives: [DownloadURL] = []
    /// URLs this attempt found failing or unfit, with why: the engine drops them for the task.
    var droppedSources: [(url: String, reason: FailureReason)] = []
    /// A checksum mismatch came from several sources' bytes: later transfers use one source.
    var usesOneSourceNext = false

    init(
        number: UInt64, url: DownloadURL, temporaryName: String, temporaryPath: String, resumeRecord: ResumeRecord?,
        context: TaskContext, checksumURL: DownloadURL? = nil, verificationRetry: VerificationRetryPolicy = .default,
        mismatchesBefore: Int = 0
    ) {
        self.checksumURL = checksumURL
        self.verificationRetry = verificationRetry
        self.mismatchesBefore = mismatchesBefore
        self.number = number
        self.url = url
        self.source = url
        self.temporaryName = temporaryName
        self.temporaryPath = temporaryPath
        self.resumeRecord = resumeRecord
        self.startOffset = resumeRecord?.offset ?? 0
        self.context = context
    }

    /// Whether the transfer continues from a record (an offset, or a segmented download's ranges).
    var resumesFromRecord: Bool { startOffset > 0 || !(resumeRecord?.completedRanges.isEmpty ?? true) }

    /// Whether a byte was written to the temporary file (or ranges of it are kept).
    var fileIsOpened: Bool { segmented?.isOpened ?? sink?.isOpened ?? false }

    /// Flushes and syncs the temporary file; returns the durable prefix's end.
    func synchronizeFile() throws(SinkWriteError) -> Int64 {
        if let segmented { return try segmented.synchronize() }
        return try sink?.synchronize() ?? startOffset
    }

    /// Lets another writer have the partial file (once it is placed or left).
    func releasePartFileLock() {
        partFileLock?.release()
        sink?.releaseLock()
    }

    /// Closes the temporary file.
    func closeFile() throws(SinkWriteError) {
        if let segmented { return try segmented.close() }
        try sink?.close()
    }

    /// `record` with its offset at `durable` and the synced ranges past it, for a resume.
    func resumeRecord(_ record: ResumeRecord, durableAt durable: Int64) -> ResumeRecord {
        var record = record
        record.offset = durable
        record.completedRanges = segmented?.durableRanges.filter { $0.lowerBound > durable } ?? []
        return record
    }

    /// Why the attempt is being cancelled, once it is.
    var disposition: Disposition? { control.withLock { $0.disposition } }

    /// Whether the engine still wants this transfer (it was not cancelled).
    var isLive: Bool { control.withLock { $0.disposition == nil } }

    /// Marks the attempt cancelled for `disposition`; discarding the file wins over keeping
    /// it, and a failure reason is not replaced.
    func setDisposition(_ disposition: Disposition) {
        control.withLock { control in
            switch (control.disposition, disposition) {
            case (nil, _), (.keepPartialFile?, .discardPartialFile), (.keepPartialFile?, .fail),
                (.keepPartialFile?, .skipExisting):
                control.disposition = disposition
            default:
                break
            }
        }
    }

    /// Applies a command decided under the engine's lock with `sequence`; an older command
    /// arriving late is ignored, and nothing follows a cancel.
    func apply(_ command: Command, sequence: UInt64, on transport: any Transport) {
        let segmented = control.withLock { control -> SegmentedTransfer? in
            guard control.command != .cancel, sequence > control.lastSequence else { return nil }
            control.lastSequence = sequence
            guard control.command != command else { return nil }
            control.command = command
            // A segmented transfer may start connections on `.run`, and a transport may deliver
            // events from inside `start`: it is called outside this lock, and orders the
            // commands by their sequence itself.
            if let segmented = control.segmented { return segmented }
            // Transports never deliver events from inside pause, resume or cancel, so calling
            // them under this lock cannot deadlock; it keeps the calls in sequence order.
            guard let id = control.id else { return nil }
            switch command {
            case .run: transport.resume(id)
            case .suspend: transport.pause(id)
            case .cancel: transport.cancel(id)
            }
            return nil
        }
        segmented?.apply(command, sequence: sequence)
    }

    /// The transfer over several connections, once launched.
    var segmented: SegmentedTransfer? { control.withLock { $0.segmented } }

    /// Records a segmented transfer (before it starts) and gives it what was asked meanwhile.
    func willStart(_ segmented: SegmentedTransfer) {
        let (command, sequence) = control.withLock { control in
            control.segmented = segmented
            return (control.command, control.lastSequence)
        }
        if command != .run { segmented.apply(command, sequence: sequence) }
    }

    /// Records the transport's identifier and applies what was asked before it was known.
    func didStart(_ id: TransferID, on transport: any Transport) {
        control.withLock { control in
            control.id = id
            switch control.command {
            case .run: break
            case .suspend: transport.pause(id)
            case .cancel: transport.cancel(id)
            }
        }
    }
}
