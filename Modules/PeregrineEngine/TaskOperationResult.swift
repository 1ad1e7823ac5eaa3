import PeregrineCore

/// What an operation on several tasks changed, and why the others were left alone.
///
/// As in SDEDownloadManager, an operation returns at once with the tasks it actually
/// changed; unlike it, each refused task comes with a typed reason.
public struct TaskOperationResult: Sendable, Hashable {
    /// The URL strings of the tasks changed, in the order they were processed.
    public var changed: [String] = []
    /// The tasks left unchanged, with the reason, in the order given.
    public var rejected: [TaskOperationError] = []

    /// Creates an empty result.
    public init() {}

    /// Whether nothing changed.
    public var isEmpty: Bool { changed.isEmpty }

    /// The reason a task was left unchanged, if it was.
    public func error(for urlString: String) -> TaskOperationError? {
        rejected.first { $0.urlString == urlString }
    }
}

/// Why an operation left a task unchanged.
public struct TaskOperationError: PeregrineError {
    /// A kind of refusal; a struct with static members so that the set can grow.
    public struct Code: PeregrineErrorCode {
        public let name: String
        /// No task has this URL string.
        public static let unknownTask = Code(name: "unknown task")
        /// The task's state does not allow the operation.
        public static let illegalTransition = Code(name: "operation not allowed in this state")
    }

    /// What kind of refusal.
    public var code: Code
    /// The task's URL string as given.
    public var urlString: String
    /// The refused transition, for ``Code/illegalTransition``.
    public var transition: TransitionError?

    /// Creates an error.
    public init(_ code: Code, urlString: String, transition: TransitionError? = nil) {
        self.code = code
        self.urlString = urlString
        self.transition = transition
    }

    /// The task's URL string, and why its state refused the operation when that is known.
    public var message: String { transition.map { "\(urlString): \($0)" } ?? urlString }

    public var description: String {
        if let transition { return "\(urlString): \(transition)" }
        return "\(urlString): \(code)"
    }
}
