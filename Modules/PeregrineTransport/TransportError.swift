import PeregrineCore

/// Why a transfer ended without success.
///
/// A struct with static codes (as in swift-nio's `FileSystemError`) so the set can grow.
/// ``description`` is bounded and says what happened; ``failureReason`` maps it to the
/// engine's `FailureReason`.
public struct TransportError: PeregrineError {
    /// A kind of transport failure.
    public struct Code: PeregrineErrorCode {
        /// A stable short name.
        public let name: String
        init(_ name: String) { self.name = name }

        /// The request was refused before any I/O (bad URL, credentials over plain http).
        public static let invalidRequest = Code("invalid request")
        /// The host name did not resolve.
        public static let dns = Code("DNS lookup failed")
        /// No connection could be made.
        public static let connect = Code("connection failed")
        /// The TLS handshake or the certificate check failed.
        public static let tls = Code("TLS failure")
        /// A timeout expired (connecting, or the whole transfer).
        public static let timeout = Code("timed out")
        /// Slower than the configured minimum for too long.
        public static let tooSlow = Code("too slow")
        /// The server answered with a status that is not a success.
        public static let httpStatus = Code("HTTP error status")
        /// A range was asked for and the server answered otherwise (200, or a wrong Content-Range).
        public static let rangeNotHonoured = Code("range not honoured")
        /// The sink could not write (disk full, I/O error).
        public static let writeFailed = Code("write failed")
        /// Cancelled by the caller.
        public static let cancelled = Code("cancelled")
        /// More redirects than the policy allows.
        public static let tooManyRedirects = Code("too many redirects")
        /// A redirect from https to http that the policy does not allow.
        public static let insecureRedirect = Code("insecure redirect")
        /// A redirect to a URL that cannot be downloaded.
        public static let invalidRedirect = Code("invalid redirect")
        /// The body was longer than the server announced, or a finished response was shorter
        /// with the connection still open.
        public static let lengthMismatch = Code("length mismatch")
        /// The connection closed before the announced body ended (a dropped or reset connection,
        /// a server that died mid-body): a network failure, worth a retry from the bytes received.
        public static let connectionClosed = Code("connection closed early")
        /// The connection broke while sending or receiving.
        public static let network = Code("network error")
        /// The server broke HTTP.
        public static let protocolViolation = Code("protocol violation")
    }

    /// What kind of failure.
    public var code: Code
    /// What happened, for people; at most 500 characters.
    public var message: String
    /// The HTTP status, for ``Code/httpStatus`` and ``Code/rangeNotHonoured``.
    public var httpStatus: Int?
    /// The URL of the hop that failed.
    public var url: String?
    /// The errno of a failed write, when there was one (`ENOSPC` for a full disk).
    public var errno: Int32?

    /// Creates an error.
    public init(_ code: Code, _ message: String, httpStatus: Int? = nil, url: String? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message.count > 500 ? String(message.prefix(500)) + "…" : message
        self.httpStatus = httpStatus
        self.url = url
        self.errno = errno
    }

    /// The engine's failure reason for this error.
    public var failureReason: FailureReason {
        let reason: FailureReason.Code =
            switch code {
            case .dns: .dns
            case .connect, .network, .connectionClosed: .network
            case .tls: .tls
            case .timeout: .timeout
            case .tooSlow: .tooSlow
            case .httpStatus where httpStatus == 401 || httpStatus == 407: .authentication
            case .httpStatus: .httpStatus
            case .rangeNotHonoured: .cannotResume
            case .writeFailed where errno == 28: .diskFull  // ENOSPC
            case .writeFailed: .fileSystem
            case .lengthMismatch, .protocolViolation: .protocolViolation
            case .invalidRedirect, .tooManyRedirects, .insecureRedirect: .redirectRefused
            default: .unknown
            }
        return FailureReason(reason, httpStatus: httpStatus, message: description)
    }
}
