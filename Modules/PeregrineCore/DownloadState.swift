/// The state of a download task, as in SDEDownloadManager plus a typed failure.
///
/// The transitions between these states are the engine's; this type only names them.
public enum DownloadState: Sendable, Hashable, Codable {
    /// Not a task of the list.
    case notInList
    /// Waiting for a slot, or never started.
    case pending
    /// Transferring.
    case downloading
    /// Paused with its connection kept open.
    case paused
    /// Stopped: connection closed, a resume record kept when the server allows resuming.
    case stopped
    /// Done: the file is in place.
    case finished
    /// Ended by a failure.
    case failed(FailureReason)
}

/// Why a task failed. A struct with static codes so that the set can grow without breaking users.
public struct FailureReason: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// A kind of failure.
    public struct Code: Sendable, Hashable, Codable, CustomStringConvertible {
        /// A stable short name, used in stored state.
        public let rawValue: String
        /// Creates a code from its stored name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The server answered with an HTTP error status.
        public static let httpStatus = Code(rawValue: "httpStatus")
        /// The connection failed or broke.
        public static let network = Code(rawValue: "network")
        /// The host name did not resolve.
        public static let dns = Code(rawValue: "dns")
        /// TLS failed: untrusted certificate, pin mismatch, handshake error.
        public static let tls = Code(rawValue: "tls")
        /// A timeout expired.
        public static let timeout = Code(rawValue: "timeout")
        /// The transfer was slower than the configured minimum for too long.
        public static let tooSlow = Code(rawValue: "tooSlow")
        /// The disk is full.
        public static let diskFull = Code(rawValue: "diskFull")
        /// Writing the file failed for another reason.
        public static let fileSystem = Code(rawValue: "fileSystem")
        /// The checksum did not match.
        public static let verification = Code(rawValue: "verification")
        /// The server would not continue from where the download stopped.
        public static let cannotResume = Code(rawValue: "cannotResume")
        /// The server rejected the credentials.
        public static let authentication = Code(rawValue: "authentication")
        /// The server sent something that breaks HTTP, or lied about the length.
        public static let protocolViolation = Code(rawValue: "protocolViolation")
        /// A redirect that cannot be followed: a loop or more hops than the redirect policy allows,
        /// a target that cannot be downloaded, or from https to plain http without the policy's
        /// leave. Asking again gets the same answer: never retried.
        public static let redirectRefused = Code(rawValue: "redirectRefused")
        /// Another process writes the task's partial file (it holds the file's lock): a second
        /// service whose lease looked expired, a second program on the same directory. The
        /// task waits and tries again; the file is left as it is.
        public static let partFileBusy = Code(rawValue: "partFileBusy")
        /// Anything else.
        public static let unknown = Code(rawValue: "unknown")
        /// The task was stopped; it continues when resumed. Ends an await on the task, never
        /// a task's state.
        public static let stopped = Code(rawValue: "stopped")
        /// The task was moved to the trash. Ends an await on the task, never a task's state.
        public static let inTrash = Code(rawValue: "inTrash")
        /// The task was deleted. Ends an await on the task, never a task's state.
        public static let deleted = Code(rawValue: "deleted")
        /// The waiting was cancelled (the download goes on). Ends an await, never a task's state.
        public static let cancelled = Code(rawValue: "cancelled")

        public var description: String { rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// The HTTP status, for ``Code/httpStatus`` and ``Code/authentication``.
    public var httpStatus: Int?
    /// A human-readable explanation, bounded in length.
    public var message: String

    /// Creates a reason.
    public init(_ code: Code, httpStatus: Int? = nil, message: String) {
        self.code = code
        self.httpStatus = httpStatus
        self.message = message.count > 500 ? String(message.prefix(500)) + "…" : message
    }

    public var description: String { message.isEmpty ? code.rawValue : message }
}
