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
///
/// Two requests are equal when every field but ``trustForHop`` is: a closure cannot be compared,
/// so the resolver takes no part in `==` or `hash(into:)`.
public struct TransferRequest: Sendable, Hashable {
    /// The URL, checked when the request was made.
    public var url: DownloadURL
    /// GET or HEAD.
    public var method: HTTPMethod
    /// Extra request headers. `Range`, `If-Range` and `Authorization` come from their own fields.
    public var headers: HTTPHeaders
    /// The bytes wanted, for a resumed or segmented download.
    public var range: ByteRange?
    /// Sent as `If-Range` with ``range``, so that a changed file comes back whole (200); a 206
    /// must also carry this validator (see ``rangeRefusal(of:)``).
    public var ifRange: ResumeValidator?
    /// With ``range``: the length of the whole file that the bytes before the range belong to,
    /// when known, so that a 206 of a file of another length is refused (see ``rangeRefusal(of:)``).
    public var rangeCompleteLength: Int64?
    /// With a ``range`` from byte 0: whether a 200 with the whole body is as good an answer as
    /// the 206 (a request for a file's first piece that also learns its length, which a server
    /// without ranges answers whole). False by default: a range is then answered by a 206 only.
    public var acceptsWholeBody = false
    /// Credentials, sent only to the request's origin (see ``RequestCredentials``).
    public var credentials: RequestCredentials?
    /// How the certificate of the request's own host is checked; also used for every other host a
    /// redirect reaches unless ``trustForHop`` answers for it. Backends read it through
    /// ``trust(for:)``.
    public var trust: TrustPolicy
    /// The policy for a hop to a host other than the request's own, e.g. a host → policy map's
    /// answer for the redirect target's host; nil to check every hop with ``trust``.
    ///
    /// Called by the backend once per such hop, on its own thread, before it connects: it must
    /// return quickly and must not block. Not part of the request's equality (see the type's
    /// documentation).
    public var trustForHop: (@Sendable (_ hop: DownloadURL) -> TrustPolicy)? {
        get { hopTrust.resolve }
        set { hopTrust.resolve = newValue }
    }
    private var hopTrust = HopTrustResolver()
    /// Connect timeout and the too-slow rule.
    public var timeouts: TransferTimeouts
    /// The most bytes per second to receive, or nil for no cap: this transfer's own cap, which
    /// the backend enforces alone (libcurl's `CURLOPT_MAX_RECV_SPEED_LARGE`).
    public var maxReceiveBytesPerSecond: Int64?
    /// The shared limits this transfer is under (a task's, a list's, a manager's): the backend
    /// charges every received chunk to each and holds the transfer back until all of them have
    /// allowed it. Empty for none. Compared by identity.
    public var bandwidthLimiters: [BandwidthLimiter]
    /// Which redirects are followed.
    public var redirects: RedirectPolicy
    /// The proxy this request goes through (`http://[user:password@]host:port`), instead of the
    /// backend's own choice (libcurl's: the `http_proxy`, `https_proxy` and `no_proxy`
    /// variables); nil for the backend's. The mock transport ignores it.
    public var proxy: String?

    /// Creates a request for a URL that was already checked.
    public init(
        url: DownloadURL,
        method: HTTPMethod = .get,
        headers: HTTPHeaders = [:],
        range: ByteRange? = nil,
        ifRange: ResumeValidator? = nil,
        rangeCompleteLength: Int64? = nil,
        credentials: RequestCredentials? = nil,
        trust: TrustPolicy = .system,
        timeouts: TransferTimeouts = TransferTimeouts(),
        maxReceiveBytesPerSecond: Int64? = nil,
        bandwidthLimiters: [BandwidthLimiter] = [],
        redirects: RedirectPolicy = RedirectPolicy()
    ) {
        self.bandwidthLimiters = bandwidthLimiters
        self.url = url
        self.method = method
        self.headers = headers
        self.range = range
        self.ifRange = ifRange
        self.rangeCompleteLength = rangeCompleteLength
        self.credentials = credentials
        self.trust = trust
        self.timeouts = timeouts
        self.maxReceiveBytesPerSecond = maxReceiveBytesPerSecond
        self.redirects = redirects
    }

    /// Creates a request from a URL string, checking it before any I/O.
    ///
    /// - Throws: `URLValidationError` for a malformed URL, an unsupported scheme or an empty host.
    public init(url string: String, method: HTTPMethod = .get) throws(URLValidationError) {
        self.init(url: try DownloadURL(string), method: method)
    }

    /// The trust policy for a hop to `hop`: ``trust`` on the request's own host, else the answer of
    /// ``trustForHop``, else ``trust``.
    ///
    /// A backend applies it afresh to every hop, so that a redirect to another host is checked
    /// under that host's policy (its own CA file or pins, and never another host's `insecure`
    /// opt-out).
    public func trust(for hop: DownloadURL) -> TrustPolicy {
        guard hop.host != url.host, let trustForHop else { return trust }
        return trustForHop(hop)
    }

    /// Why `head` is not an answer this request's ``range`` may be appended from, or nil when it
    /// is one (always nil without a range).
    ///
    /// An answer to a range is a 206 whose `Content-Range` starts at the range's start, carries
    /// the ``ifRange`` validator the bytes before it were written under (the same `ETag`, or the
    /// same `Last-Modified` for a date) and, when both are known, the same complete length as
    /// ``rangeCompleteLength``. Servers that ignore `If-Range` answer a changed file with a 206
    /// of the new version: appending it would splice two versions into one file. Every backend
    /// refuses such an answer with ``TransportError/Code/rangeNotHonoured`` before writing a byte.
    public func rangeRefusal(of head: ResponseHead) -> String? {
        guard let range else { return nil }
        if head.status == 200, acceptsWholeBody, range.start == 0 { return nil }
        guard head.status == 206 else { return "status \(head.status)" }
        guard let contentRange = head.contentRange, contentRange.first == range.start else {
            return "a range that starts elsewhere (\(head.headers["Content-Range"] ?? "no Content-Range"))"
        }
        switch ifRange {
        case .entityTag(let tag)?:
            guard head.entityTag == tag else {
                return "a 206 of another version (ETag \(head.entityTag ?? "none"), the partial file's \(tag))"
            }
        case .lastModified(let date)?:
            guard head.lastModified == date else {
                return
                    "a 206 of another version (Last-Modified \(head.lastModified ?? "none"), the partial file's \(date))"
            }
        case nil:
            break
        }
        if let expected = rangeCompleteLength, let announced = contentRange.completeLength, announced != expected {
            return "a 206 of a file of \(announced) bytes, the partial file's has \(expected)"
        }
        return nil
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

/// Holds ``TransferRequest/trustForHop`` so that the request keeps its synthesized `Hashable`
/// conformance: every value of this type is equal to every other and hashes to nothing.
private struct HopTrustResolver: Sendable, Hashable {
    var resolve: (@Sendable (DownloadURL) -> TrustPolicy)?

    static func == (_: Self, _: Self) -> Bool { true }
    func hash(into _: inout Hasher) {}
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

    /// The too-slow rule: a transfer slower than `bytesPerSecond` for `duration` is aborted. At
    /// 1 byte/s it reads "no byte for `duration`" (once the request is sent; a pause or a
    /// bandwidth limit's wait does not count): the libcurl backend keeps that on its own clock,
    /// where libcurl would judge a speed averaged over 5 s.
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
