import PeregrineCore

/// Why a ``DownloadEngine`` or one of its parts (a ``BackoffRetryPolicy``) could not be created.
public struct EngineError: PeregrineError {
    /// A kind of problem; a struct with static members so that the set can grow.
    public struct Code: PeregrineErrorCode {
        public let name: String
        /// The download directory does not exist and cannot be created, or is not a directory.
        public static let directoryUnavailable = Code(name: "download directory unavailable")
        /// A setting is out of its range (a negative retry count, say).
        public static let invalidArgument = Code(name: "invalid argument")
    }

    /// What went wrong.
    public var code: Code
    /// The details, and what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
