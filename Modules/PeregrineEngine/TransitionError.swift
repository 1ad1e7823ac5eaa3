import PeregrineCore

/// An event that the task's current state does not allow. Nothing changed.
public struct TransitionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The state the task was in (and still is).
    public var state: DownloadState
    /// Whether the task was waiting in its list's queue.
    public var wasQueued: Bool
    /// The refused event.
    public var event: TaskEvent

    /// Creates an error.
    public init(state: DownloadState, wasQueued: Bool, event: TaskEvent) {
        self.state = state
        self.wasQueued = wasQueued
        self.event = event
    }

    public var description: String {
        let name = TaskStateMachine.name(of: state, queued: wasQueued)
        return "cannot \(event) a task that is \(name)" + Self.hint(state: state, queued: wasQueued, event: event)
    }

    private static func hint(state: DownloadState, queued: Bool, event: TaskEvent) -> String {
        switch (state, event) {
        case (.finished, .resume): " (restart it to download the file again)"
        case (.notInList, _): " (add it first)"
        case (.pending, .resume) where queued: " (it is already waiting for a slot)"
        default: ""
        }
    }
}
