import PeregrineCore
import PeregrineTransport

/// What a plug-in learns about the task and transfer it is asked about.
public struct TaskContext: Sendable {
    /// The task's URL.
    public var url: DownloadURL
    /// Its list.
    public var list: DownloadListKey
    /// The checksum specification given with the task, if any.
    public var checksum: String?
    /// The absolute path of the temporary file the transfer writes.
    public var temporaryFilePath: String
    /// The byte at which the transfer starts writing; the bytes before it are already in the
    /// temporary file (a resume).
    public var startOffset: Int64
    /// How many times the transfer was retried after a failure since the user's last action.
    public var retryCount: Int
    /// The failure that led to this retry, if it is one: what an authentication plug-in reads
    /// a `WWW-Authenticate` challenge from.
    public var previousFailure: TransferFailure?
    /// How many connections the task may use; nil for the engine's configuration.
    public var maxConnections: Int?

    /// Creates a context: the engine makes one per transfer; plug-in tests make their own.
    public init(
        url: DownloadURL, list: DownloadListKey = .default, checksum: String? = nil, temporaryFilePath: String,
        startOffset: Int64 = 0, retryCount: Int = 0, previousFailure: TransferFailure? = nil, maxConnections: Int? = nil
    ) {
        self.maxConnections = maxConnections
        self.url = url
        self.list = list
        self.checksum = checksum
        self.temporaryFilePath = temporaryFilePath
        self.startOffset = startOffset
        self.retryCount = retryCount
        self.previousFailure = previousFailure
    }
}

/// A failed transfer, as a ``RetryPolicy`` sees it.
public struct TransferFailure: Sendable {
    /// The engine's reason.
    public var reason: FailureReason
    /// The transport's error, when the transport failed (not for a failed verification).
    public var transportError: TransportError?
    /// The head of the final response, when one arrived (a 401's challenges, a 503's Retry-After).
    public var head: ResponseHead?
    /// The request that failed.
    public var request: TransferRequest
}
