import PeregrineCore

/// The HTTP methods a download transfer uses.
public enum HTTPMethod: String, Sendable, Hashable {
    /// Fetch the body.
    case get = "GET"
    /// Fetch only the head, to learn the size, type and validators.
    case head = "HEAD"
}

/// One transfer to run: what to fetch and under which rules.
///
/// Every field has a safe default: TLS verified against the system's CAs, at most 10 redirects,
/// never from https to http, credentials never sent to another origin or over plain http.
public struct TransferRequest: Sendable, Hashable {
    /// The URL, checked when the request was made.
    public var url: DownloadURL
    /// GET or HEAD.
    public var method: HTTPMethod
    /// Extra request headers. `Range`, `If-Range` and `Authorization` come from their own fields.
    public var headers: HTTPHeaders
    /// The bytes wanted, for a resumed or segmented download.
    public var range: ByteRange?
    /// Sent as `If-Range` with ``range``, so that a changed file comes back whole (200).
    public var ifRange: ResumeValidator?
    /// Credentials, sent only to the request's origin (see ``RequestCredentials``).
    public var credentials: RequestCredentials?
    /// How the server's certificate is checked.
    public var trust: TrustPolicy
    /// Connect timeout and the too-slow rule.
    public var timeouts: TransferTimeouts
    /// The most bytes per second to receive, or nil for no cap.
    public var maxReceiveBytesPerSecond: Int64?
    /// Which redirects are followed.
    public var redirects: RedirectPolicy

    /// Creates a request for a URL that was already checked.
    public init(
        url: DownloadURL,
        method: HTTPMethod = .get,
        headers: HTTPHeaders = [:],
        range: ByteRange? = nil,
        ifRange: ResumeValidator? = nil,
        credentials: RequestCredentials? = nil,
        trust: TrustPolicy = .system,
        timeouts: TransferTimeouts = TransferTimeouts(),
        maxReceiveBytesPerSecond: Int64? = nil,
        redirects: RedirectPolicy = RedirectPolicy()
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.range = range
        self.ifRange = ifRange
        self.credentials = credentials
        self.trust = trust
        self.timeouts = timeouts
        self.maxReceiveBytesPerSecond = maxReceiveBytesPerSecond
        self.redirects = redirects
    }

    /// Creates a request from a URL string, checking it before any I/O.
    ///
    /// - Throws: ``URLValidationError`` for a malformed URL, an unsupported scheme or an empty host.
    public init(url string: String, method: HTTPMethod = .get) throws(URLValidationError) {
        self.init(url: try DownloadURL(string), method: method)
    }

    /// The headers to send on a hop to `url`: the caller's headers, `Range`/`If-Range`, and
    /// `Authorization` only where ``RequestCredentials/isAllowed(for:)`` says so.
    ///
    /// Both backends build their header lists here, so they send the same bytes.
    public func headersToSend(to hop: DownloadURL) -> HTTPHeaders {
        var result = headers
        let sameOrigin = hop.origin == url.origin
        if !sameOrigin {
            for name in RedirectPolicy.credentialHeaderNames { result.remove(name: name) }
        }
        if let range {
            result.replaceOrAdd(name: "Range", value: range.headerValue)
            if let ifRange { result.replaceOrAdd(name: "If-Range", value: ifRange.headerValue) }
        }
        if let credentials, sameOrigin, credentials.isAllowed(for: hop) {
            result.replaceOrAdd(name: "Authorization", value: credentials.authorization)
        }
        return result
    }
}

/// Credentials for one request, as the Auth module computes them.
///
/// The transport sends ``authorization`` verbatim, so Basic and Digest are computed (and
/// tested byte for byte) outside the transport. They are sent only to the origin of the
/// original request, and over plain http only when ``allowPlainHTTP`` is set.
public struct RequestCredentials: Sendable, Hashable {
    /// The value of the `Authorization` header, e.g. `Basic dXNlcjpwYXNz`.
    public var authorization: String
    /// Whether these credentials may cross plain http.
    public var allowPlainHTTP: Bool

    /// Creates credentials.
    public init(authorization: String, allowPlainHTTP: Bool = false) {
        self.authorization = authorization
        self.allowPlainHTTP = allowPlainHTTP
    }

    /// Whether the credentials may be sent to this URL's scheme.
    public func isAllowed(for url: DownloadURL) -> Bool {
        url.scheme == "https" || allowPlainHTTP
    }
}

/// Timeouts of a transfer.
public struct TransferTimeouts: Sendable, Hashable {
    /// How long connecting (TCP and TLS) may take.
    public var connect: Duration
    /// Abort when fewer than `bytesPerSecond` arrive for `duration`; nil to never abort.
    public var lowSpeed: LowSpeedLimit?

    /// The too-slow rule: a transfer slower than `bytesPerSecond` for `duration` is aborted.
    public struct LowSpeedLimit: Sendable, Hashable {
        /// The minimum average speed.
        public var bytesPerSecond: Int
        /// How long the speed may stay below the minimum.
        public var duration: Duration
        /// Creates a rule.
        public init(bytesPerSecond: Int, duration: Duration) {
            self.bytesPerSecond = bytesPerSecond
            self.duration = duration
        }
    }

    /// Creates timeouts; the default gives 30 s to connect and aborts below 1 byte/s for 60 s.
    public init(
        connect: Duration = .seconds(30),
        lowSpeed: LowSpeedLimit? = LowSpeedLimit(bytesPerSecond: 1, duration: .seconds(60))
    ) {
        self.connect = connect
        self.lowSpeed = lowSpeed
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded up so that a tiny positive value stays positive.
    package var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }
}
