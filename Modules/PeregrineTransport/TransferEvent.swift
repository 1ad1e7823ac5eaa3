/// Identifies a transfer within one transport.
public struct TransferID: Sendable, Hashable, CustomStringConvertible {
    /// The number, unique within the transport that issued it.
    public let rawValue: UInt64
    /// Creates an identifier.
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "#\(rawValue)" }
}

/// Something that happened to a transfer. Body bytes are not events: they go to the sink.
public enum TransferEvent: Sendable, Hashable {
    /// A redirect was followed.
    case redirected(Redirect)
    /// The head of the final response arrived; body bytes follow, to the sink.
    case head(ResponseHead)
    /// Body bytes were written to the sink. Backends coalesce these (see ``Transport``).
    case progress(TransferProgress)
    /// The transfer ended. Always the last event, sent exactly once.
    case completed(Result<TransferSummary, TransportError>)
}

/// A followed redirect.
public struct Redirect: Sendable, Hashable {
    /// The redirect status.
    public var status: Int
    /// The URL that answered with it.
    public var from: String
    /// The URL followed.
    public var to: String

    /// Creates a value.
    public init(status: Int, from: String, to: String) {
        self.status = status
        self.from = from
        self.to = to
    }
}

/// How much of the body has been written.
public struct TransferProgress: Sendable, Hashable {
    /// Body bytes written to the sink by this transfer.
    public var receivedBytes: Int64
    /// Body bytes this transfer expects (the Content-Length), when known.
    public var expectedBytes: Int64?

    /// Creates a value.
    public init(receivedBytes: Int64, expectedBytes: Int64?) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
    }
}

/// The outcome of a successful transfer.
public struct TransferSummary: Sendable, Hashable {
    /// The head of the final response.
    public var head: ResponseHead
    /// Body bytes written to the sink, starting at the request's range start (or 0).
    public var receivedBytes: Int64
    /// The redirects followed, in order.
    public var redirectCount: Int

    /// Creates a value.
    public init(head: ResponseHead, receivedBytes: Int64, redirectCount: Int) {
        self.head = head
        self.receivedBytes = receivedBytes
        self.redirectCount = redirectCount
    }
}
