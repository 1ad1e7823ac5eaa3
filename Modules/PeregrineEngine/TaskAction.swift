import PeregrineCore

/// What the engine must do after a transition of ``TaskStateMachine``: the I/O the pure
/// state machine leaves to its shell.
public enum TaskAction: Sendable, Hashable, CustomStringConvertible {
    /// Put the task in its list's waiting queue (in list order).
    case enqueue
    /// Take the task out of the waiting queue.
    case dequeue
    /// Start a transfer: from the record's offset with `Range` and `If-Range`, or from zero.
    case startTransfer(ResumeRecord?)
    /// Suspend the running transfer, keeping its connection (and its slot).
    case suspendTransfer
    /// Continue a suspended transfer (or start one from the resume record when the
    /// connection is gone).
    case resumeTransfer
    /// Close the transfer. With `keepingPartialFile` the temporary file stays for a resume;
    /// without, it is deleted once the transfer has ended.
    case cancelTransfer(keepingPartialFile: Bool)
    /// The task gave up its slot: the next waiting task of its list may start.
    case releaseSlot
    /// Delete the temporary file.
    case deleteTemporaryFile
    /// Delete the finished file.
    case deleteFinishedFile

    public var description: String {
        switch self {
        case .enqueue: "enqueue"
        case .dequeue: "dequeue"
        case .startTransfer(let record): record.map { "start transfer at \($0.offset)" } ?? "start transfer from zero"
        case .suspendTransfer: "suspend transfer"
        case .resumeTransfer: "resume transfer"
        case .cancelTransfer(let keeping): keeping ? "cancel transfer (keep partial file)" : "cancel transfer"
        case .releaseSlot: "release slot"
        case .deleteTemporaryFile: "delete temporary file"
        case .deleteFinishedFile: "delete finished file"
        }
    }
}
