/// What ``DownloadEngine/restore(_:)`` did with each stored record.
public struct RestoreResult: Sendable, Hashable {
    /// A record that was not taken back.
    public struct Rejection: Sendable, Hashable, CustomStringConvertible {
        /// The record's URL string.
        public var urlString: String
        /// Why: an invalid URL, a duplicate, or a record of a task not in the list.
        public var reason: String
        public var description: String { "\(urlString): \(reason)" }
    }

    /// The URL strings of the tasks taken back, in list order.
    public var restored: [String] = []
    /// Those whose state changed on the way back (interrupted, or their file missing), with
    /// the stored state; each also got an ``EngineEvent/restored(_:previousState:)`` event.
    public var recovered: [String] = []
    /// The records refused; nothing of them entered the engine.
    public var rejected: [Rejection] = []

    /// Creates an empty result.
    public init() {}
}
