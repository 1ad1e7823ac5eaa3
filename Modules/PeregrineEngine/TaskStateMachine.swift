import PeregrineCore

/// The life of one download task as a pure value: a `DownloadState`, the resume record and
/// whether the task waits in its list's queue, changed only by ``apply(_:)``.
///
/// No I/O happens here. ``apply(_:)`` either changes the value and returns the
/// ``TaskAction``s its shell (``DownloadEngine``) must carry out, or throws a
/// ``TransitionError`` and changes nothing. A `pending` task is *waiting* when it sits in the
/// queue (``isQueued``), else *idle*; a task *holds a slot* of its list's `maxDownloadCount`
/// while it is `downloading` or `paused` (a paused transfer keeps its connection).
///
/// ## Transitions
///
/// R = the task has a resume record. Every pair of state and event not listed is refused
/// with ``TransitionError`` and changes nothing.
///
/// | from | event | to | actions |
/// |---|---|---|---|
/// | notInList | add | pending (idle) | — |
/// | notInList | import with resume record | stopped | — (record kept) |
/// | notInList | import without resume record | pending (idle) | — |
/// | pending (idle), stopped, failed | resume, slot free | downloading | startTransfer(R or zero) |
/// | pending (idle), stopped, failed | resume, no slot | pending (waiting) | enqueue (record kept) |
/// | paused | resume | downloading | resumeTransfer |
/// | pending (waiting) | grant slot | downloading | dequeue, startTransfer(R or zero) |
/// | downloading | pause, keep connection | paused | suspendTransfer |
/// | downloading | pause without keeping the connection, or stop; R | stopped | cancelTransfer(keep partial file), releaseSlot |
/// | downloading | pause without keeping the connection, or stop; no R | pending (idle) | cancelTransfer(delete partial file), releaseSlot |
/// | paused | stop; R | stopped | cancelTransfer(keep partial file), releaseSlot |
/// | paused | stop; no R | pending (idle) | cancelTransfer(delete partial file), releaseSlot |
/// | pending (waiting) | pause (either kind) or stop; R | stopped | dequeue |
/// | pending (waiting) | pause (either kind) or stop; no R | pending (idle) | dequeue |
/// | finished | restart, slot free | downloading | deleteFinishedFile, startTransfer(zero) |
/// | finished | restart, no slot | pending (waiting) | deleteFinishedFile, enqueue |
/// | stopped, failed | restart, slot free | downloading | deleteTemporaryFile, startTransfer(zero); R dropped |
/// | stopped, failed | restart, no slot | pending (waiting) | deleteTemporaryFile, enqueue; R dropped |
/// | downloading | revoke slot | pending (waiting) | cancelTransfer(keep partial file if R), enqueue |
/// | paused | revoke slot; R | stopped | cancelTransfer(keep partial file) |
/// | paused | revoke slot; no R | pending (idle) | cancelTransfer(delete partial file) |
/// | downloading, paused, pending (waiting), failed | update resume record | same | — (record replaced) |
/// | stopped | update resume record (a record) | stopped | — (record replaced) |
/// | stopped | update resume record (none) | pending (idle) | — |
/// | downloading | restart from zero | downloading | deleteTemporaryFile, startTransfer(zero); R dropped |
/// | downloading, paused | succeed | finished | releaseSlot; R dropped |
/// | downloading, paused | fail(reason) | failed(reason) | releaseSlot (R kept) |
/// | downloading, paused | delete file | pending (idle) | cancelTransfer(delete partial file), releaseSlot, deleteTemporaryFile; R dropped |
/// | pending (waiting) | delete file | pending (idle) | dequeue, deleteTemporaryFile; R dropped |
/// | pending (idle), stopped, failed | delete file | pending (idle) | deleteTemporaryFile; R dropped |
/// | finished | delete file | pending (idle) | deleteFinishedFile |
/// | downloading, paused | delete | notInList | cancelTransfer(delete partial file), releaseSlot, deleteTemporaryFile |
/// | pending (waiting) | delete | notInList | dequeue, deleteTemporaryFile |
/// | pending (idle), stopped, failed | delete | notInList | deleteTemporaryFile |
/// | finished | delete, keep finished file | notInList | — (the file stays) |
/// | finished | delete | notInList | deleteFinishedFile |
///
/// Refused, among others: `add` or `import` of a task in the list; `resume` of a downloading,
/// waiting or finished task (restart a finished one); `pause` of a task that is not
/// downloading or waiting; `stop` of an idle, stopped, finished or failed task; `restart` of
/// a pending, downloading or paused task; anything but `add` and `import` on `notInList`.
public struct TaskStateMachine: Sendable, Hashable {
    /// The task's state.
    public private(set) var state: DownloadState
    /// Where the transfer can continue; nil when it must start from zero.
    public private(set) var resumeRecord: ResumeRecord?
    /// Whether the task waits in its list's queue for a slot (only while `pending`).
    public private(set) var isQueued: Bool

    /// A task that is not in the list yet.
    public init() {
        state = .notInList
        resumeRecord = nil
        isQueued = false
    }

    /// Whether the task holds one of its list's slots: `downloading`, or `paused` with its
    /// connection kept.
    public var holdsSlot: Bool { state == .downloading || state == .paused }

    /// Whether the task is `pending` and waits in the queue.
    public var isWaiting: Bool { state == .pending && isQueued }

    /// Applies an event: changes the value and returns the actions to carry out, in order.
    ///
    /// - Throws: ``TransitionError`` when the current state does not allow `event`; the value
    ///   is then unchanged.
    @discardableResult
    public mutating func apply(_ event: TaskEvent) throws(TransitionError) -> [TaskAction] {
        let refused = TransitionError(state: state, wasQueued: isQueued, event: event)
        switch (state, event) {
        case (.notInList, .add):
            state = .pending
            return []
        case (.notInList, .importRecord(let record)):
            resumeRecord = record
            state = record == nil ? .pending : .stopped
            return []

        case (.pending, .resume(let slotAvailable)) where !isQueued:
            return start(slotAvailable: slotAvailable)
        case (.stopped, .resume(let slotAvailable)), (.failed, .resume(let slotAvailable)):
            return start(slotAvailable: slotAvailable)
        case (.paused, .resume):
            state = .downloading
            return [.resumeTransfer]

        case (.pending, .grantSlot) where isQueued:
            isQueued = false
            state = .downloading
            return [.dequeue, .startTransfer(resumeRecord)]

        case (.downloading, .pause(keepingConnection: true)):
            state = .paused
            return [.suspendTransfer]
        case (.downloading, .pause(keepingConnection: false)), (.downloading, .stop), (.paused, .stop):
            let keep = resumeRecord != nil
            state = keep ? .stopped : .pending
            return [.cancelTransfer(keepingPartialFile: keep), .releaseSlot]
        case (.pending, .pause) where isQueued, (.pending, .stop) where isQueued:
            isQueued = false
            state = resumeRecord != nil ? .stopped : .pending
            return [.dequeue]

        case (.finished, .restart(let slotAvailable)):
            resumeRecord = nil
            return [.deleteFinishedFile] + start(slotAvailable: slotAvailable)
        case (.stopped, .restart(let slotAvailable)), (.failed, .restart(let slotAvailable)):
            resumeRecord = nil
            return [.deleteTemporaryFile] + start(slotAvailable: slotAvailable)

        case (.downloading, .revokeSlot):
            state = .pending
            isQueued = true
            return [.cancelTransfer(keepingPartialFile: resumeRecord != nil), .enqueue]
        case (.paused, .revokeSlot):
            let keep = resumeRecord != nil
            state = keep ? .stopped : .pending
            return [.cancelTransfer(keepingPartialFile: keep)]

        case (.downloading, .updateResumeRecord(let record)), (.paused, .updateResumeRecord(let record)),
            (.failed, .updateResumeRecord(let record)):
            resumeRecord = record
            return []
        case (.pending, .updateResumeRecord(let record)) where isQueued:
            resumeRecord = record
            return []
        case (.stopped, .updateResumeRecord(let record)):
            resumeRecord = record
            if record == nil { state = .pending }
            return []

        case (.downloading, .restartFromZero):
            resumeRecord = nil
            return [.deleteTemporaryFile, .startTransfer(nil)]

        case (.downloading, .succeed), (.paused, .succeed):
            state = .finished
            resumeRecord = nil
            return [.releaseSlot]
        case (.downloading, .fail(let reason)), (.paused, .fail(let reason)):
            state = .failed(reason)
            return [.releaseSlot]

        case (.notInList, .deleteFile), (.notInList, .delete):
            throw refused
        case (_, .deleteFile):
            let actions = leave(keepingFinishedFile: false)
            state = .pending
            return actions
        case (_, .delete(let keepingFinishedFile)):
            let actions = leave(keepingFinishedFile: keepingFinishedFile)
            state = .notInList
            return actions

        default:
            throw refused
        }
    }

    /// Starts at once or queues, per the list's free slots.
    private mutating func start(slotAvailable: Bool) -> [TaskAction] {
        if slotAvailable {
            state = .downloading
            isQueued = false
            return [.startTransfer(resumeRecord)]
        }
        state = .pending
        isQueued = true
        return [.enqueue]
    }

    /// The actions that take the task out of whatever it is doing and remove its files.
    private mutating func leave(keepingFinishedFile: Bool) -> [TaskAction] {
        var actions: [TaskAction] = []
        if holdsSlot { actions += [.cancelTransfer(keepingPartialFile: false), .releaseSlot] }
        if isQueued { actions.append(.dequeue) }
        if state == .finished {
            if !keepingFinishedFile { actions.append(.deleteFinishedFile) }
        } else {
            actions.append(.deleteTemporaryFile)
        }
        isQueued = false
        resumeRecord = nil
        return actions
    }

    // MARK: Recovery

    /// The machine of a task loaded from storage after the process ended, by the seed's rules:
    /// a task recorded as `downloading` or `paused` was interrupted and comes back `stopped`
    /// (with a resume record) or `pending`; a `finished` task whose file is missing comes back
    /// `pending`; a `pending` task with a resume record comes back `stopped` and a `stopped`
    /// one without a record `pending`. Nothing is queued.
    ///
    /// - Parameters:
    ///   - state: the stored state; `notInList` stays `notInList` (the caller rejects it).
    ///   - resumeRecord: the stored record, or nil when its partial file is gone or too short.
    ///   - finishedFileExists: whether a `finished` task's file is still in place.
    public static func recovered(
        from state: DownloadState, resumeRecord: ResumeRecord?, finishedFileExists: Bool
    ) -> TaskStateMachine {
        var machine = TaskStateMachine()
        switch state {
        case .notInList:
            return machine
        case .pending, .downloading, .paused, .stopped:
            machine.state = resumeRecord == nil ? .pending : .stopped
            machine.resumeRecord = resumeRecord
        case .finished:
            machine.state = finishedFileExists ? .finished : .pending
        case .failed(let reason):
            machine.state = .failed(reason)
            machine.resumeRecord = resumeRecord
        }
        return machine
    }

    /// A short name of a state for messages: "waiting" for a queued pending task.
    public static func name(of state: DownloadState, queued: Bool) -> String {
        switch state {
        case .notInList: "not in the list"
        case .pending: queued ? "waiting" : "pending"
        case .downloading: "downloading"
        case .paused: "paused"
        case .stopped: "stopped"
        case .finished: "finished"
        case .failed(let reason): "failed (\(reason.code))"
        }
    }
}
