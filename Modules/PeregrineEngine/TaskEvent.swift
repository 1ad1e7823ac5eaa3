import PeregrineCore

/// Something that happens to a download task: what ``TaskStateMachine`` reacts to.
///
/// Operations of the user (resume, pause, stop, restart, delete), decisions of the scheduler
/// (a slot granted or revoked) and outcomes of the transfer (success, failure, a resume
/// record learnt) are all events, so that every state change goes through one pure function.
public enum TaskEvent: Sendable, Hashable, CustomStringConvertible {
    /// A new task joins the list.
    case add
    /// A task is imported from a stored record (or a foreign resume record): it joins as
    /// `stopped` when it carries a resume record, else as `pending`.
    case importRecord(ResumeRecord?)
    /// The user asks the task to run; `slotAvailable` says whether its list has a free slot.
    case resume(slotAvailable: Bool)
    /// The scheduler gives a waiting task a slot.
    case grantSlot
    /// The user pauses: with `keepingConnection` the transfer is suspended and keeps its slot
    /// (`pauseDownloadBySuspendingSessionTask`), else the task stops with a resume record.
    case pause(keepingConnection: Bool)
    /// The user stops: the connection is closed, a resume record is kept when there is one.
    case stop
    /// The user downloads the file again from the first byte.
    case restart(slotAvailable: Bool)
    /// The list's limit went down and this task is part of the surplus.
    case revokeSlot
    /// The resume record changed: learnt from a response head, moved by a checkpoint, or
    /// dropped because the partial file is gone.
    case updateResumeRecord(ResumeRecord?)
    /// The server would not continue where the file stopped: download it again from zero.
    case restartFromZero
    /// The transfer completed and the file is in place.
    case succeed
    /// The transfer (or the checks after it) failed.
    case fail(FailureReason)
    /// The user deletes the task's file but keeps the task.
    case deleteFile
    /// The user deletes the task; a finished file stays when `keepingFinishedFile` is set.
    case delete(keepingFinishedFile: Bool)

    public var description: String {
        switch self {
        case .add: "add"
        case .importRecord(let record): record == nil ? "import" : "import with resume record"
        case .resume(let slot): slot ? "resume (slot free)" : "resume (no slot)"
        case .grantSlot: "grant slot"
        case .pause(let keeping): keeping ? "pause (keep connection)" : "pause (stop)"
        case .stop: "stop"
        case .restart(let slot): slot ? "restart (slot free)" : "restart (no slot)"
        case .revokeSlot: "revoke slot"
        case .updateResumeRecord(let record): record == nil ? "drop resume record" : "update resume record"
        case .restartFromZero: "restart from zero"
        case .succeed: "succeed"
        case .fail: "fail"
        case .deleteFile: "delete file"
        case .delete(let keeping): keeping ? "delete (keep finished file)" : "delete"
        }
    }
}
