import PeregrineCore
import PeregrineTransport
import PeregrineVerification
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
    private let control = Mutex(Control())

    // Used by the thread that launches the attempt, then only by the transport's thread that
    // delivers its events (serially); never concurrently.
    var request: TransferRequest?
    var sink: TemporaryFileSink?
    var transferSink: (any TransferSink)?
    var head: ResponseHead?
    /// The file's complete length from the head, parsed once.
    var completeLength: Int64?
    var isResumable = false
    var receivedBytes: Int64 = 0
    var lastCheckpointTime: Duration = .zero
    var lastCheckpointBytes: Int64 = 0
    var lastProgressEvent: Duration?

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
        self.temporaryName = temporaryName
        self.temporaryPath = temporaryPath
        self.resumeRecord = resumeRecord
        self.startOffset = resumeRecord?.offset ?? 0
        self.context = context
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
        control.withLock { control in
            guard control.command != .cancel, sequence > control.lastSequence else { return }
            control.lastSequence = sequence
            guard control.command != command else { return }
            control.command = command
            // Transports never deliver events from inside pause, resume or cancel, so calling
            // them under this lock cannot deadlock; it keeps the calls in sequence order.
            guard let id = control.id else { return }
            switch command {
            case .run: transport.resume(id)
            case .suspend: transport.pause(id)
            case .cancel: transport.cancel(id)
            }
        }
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
