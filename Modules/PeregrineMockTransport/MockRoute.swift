import PeregrineCore

/// What a mock server answers on one path: status, headers, body, validators, range support,
/// timing and faults.
///
/// A plain value: build one with ``file(_:entityTag:lastModified:)``, ``redirect(_:to:)``,
/// ``status(_:body:retryAfter:)`` or the memberwise initialiser, then refine it with the
/// modifiers (``faulting(_:)``, ``delayed(by:)``, ``throttled(toBytesPerSecond:)``,
/// ``requiringAuthorization(_:challenges:)``). ``MockResponsePlan`` turns a route and a request
/// into the response the in-memory transport and the loopback server both send.
public struct MockRoute: Sendable, Hashable {
    /// The status of a normal answer (200 for a file). Ranges are served only when it is 200.
    public var status: Int
    /// Extra response headers, e.g. `Content-Type`. A name the planner also sets
    /// (`Content-Length`, `ETag`, …) replaces the planner's value: a way to make the server lie.
    public var headers: HTTPHeaders
    /// The representation.
    public var body: MockBody
    /// The `ETag` policy.
    public var entityTag: MockEntityTag
    /// The `Last-Modified` value, sent as is, or nil for none.
    public var lastModified: String?
    /// Whether `Range` is served (206, 416) and `Accept-Ranges: bytes` advertised.
    public var honoursRanges: Bool
    /// Credentials the route demands, or nil for an open route.
    public var authorization: MockAuthorizationRequirement?
    /// How long the server waits before sending the head.
    public var latency: Duration
    /// The most body bytes per second the server sends, or nil for no limit.
    public var bytesPerSecond: Int64?
    /// Misbehaviours on the wire.
    public var faults: [MockFault]

    /// Creates a route.
    public init(
        status: Int = 200,
        headers: HTTPHeaders = [:],
        body: MockBody = .empty,
        entityTag: MockEntityTag = .none,
        lastModified: String? = nil,
        honoursRanges: Bool = true,
        authorization: MockAuthorizationRequirement? = nil,
        latency: Duration = .zero,
        bytesPerSecond: Int64? = nil,
        faults: [MockFault] = []
    ) {
        precondition((100...999).contains(status), "an HTTP status has three digits")
        precondition(bytesPerSecond.map { $0 > 0 } ?? true, "a throughput limit is positive")
        precondition(latency >= .zero, "latency is not negative")
        self.status = status
        self.headers = headers
        self.body = body
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.honoursRanges = honoursRanges
        self.authorization = authorization
        self.latency = latency
        self.bytesPerSecond = bytesPerSecond
        self.faults = faults
    }

    /// A downloadable file: 200, `application/octet-stream`, ranges honoured.
    public static func file(
        _ body: MockBody, entityTag: MockEntityTag = .none, lastModified: String? = nil
    ) -> MockRoute {
        MockRoute(
            headers: ["Content-Type": "application/octet-stream"], body: body, entityTag: entityTag,
            lastModified: lastModified)
    }

    /// A redirect to `location`, absolute or relative (resolved against the URL that asked).
    public static func redirect(_ status: Int = 302, to location: String) -> MockRoute {
        precondition((300..<400).contains(status), "a redirect status is 3xx")
        return MockRoute(
            status: status, headers: ["Location": location, "Content-Type": "text/plain"],
            body: .text("redirecting to \(location)\n"), honoursRanges: false)
    }

    /// A response with this status and a small text body, e.g. a 503 with `Retry-After`.
    ///
    /// - Parameter status: the response's status code.
    /// - Parameter body: the body, or nil for none.
    /// - Parameter retryAfter: the `Retry-After` value (seconds or an HTTP-date), or nil.
    public static func status(_ status: Int, body: MockBody? = nil, retryAfter: String? = nil) -> MockRoute {
        var headers: HTTPHeaders = ["Content-Type": "text/plain"]
        if let retryAfter { headers.add(name: "Retry-After", value: retryAfter) }
        return MockRoute(
            status: status, headers: headers, body: body ?? .text("status \(status)\n"), honoursRanges: false)
    }

    /// This route with `fault` added.
    public func faulting(_ fault: MockFault) -> MockRoute {
        var route = self
        route.faults.append(fault)
        return route
    }

    /// This route with the head delayed by `latency`.
    public func delayed(by latency: Duration) -> MockRoute {
        var route = self
        route.latency = latency
        return route
    }

    /// This route with the body sent at most `bytesPerSecond` bytes per second.
    public func throttled(toBytesPerSecond bytesPerSecond: Int64) -> MockRoute {
        precondition(bytesPerSecond > 0, "a throughput limit is positive")
        var route = self
        route.bytesPerSecond = bytesPerSecond
        return route
    }

    /// This route answering 401 with `challenges` unless `Authorization` equals `expected`.
    public func requiringAuthorization(
        _ expected: String, challenges: [String] = ["Basic realm=\"mock\""]
    ) -> MockRoute {
        var route = self
        route.authorization = MockAuthorizationRequirement(expectedAuthorization: expected, challenges: challenges)
        return route
    }

    /// This route with a response header added (kept beside any of the same name).
    public func adding(header name: String, value: String) -> MockRoute {
        var route = self
        route.headers.add(name: name, value: value)
        return route
    }
}
