import PeregrineCore

/// The response a mock server sends to one request: status, complete headers, which bytes of
/// the body go on the wire, how the body ends, and the timing.
///
/// ``init(request:route:requestNumber:)`` is a pure function of its inputs. The in-memory
/// ``MockTransport`` and the test suite's loopback HTTP server both send the plan it returns, so
/// they answer byte for byte alike.
public struct MockResponsePlan: Sendable, Hashable {
    /// How the body ends on the wire.
    public enum Ending: Sendable, Hashable {
        /// All of ``MockResponsePlan/bodyRange`` is sent and the connection stays open.
        case complete
        /// The connection is closed after this many body bytes (fewer than announced).
        case dropAfter(Int64)
        /// This many body bytes are sent (fewer than announced), then nothing, connection open.
        case stallAfter(Int64)
        /// All of the body is sent, then this many more bytes, then the connection is closed.
        case extraBytes(Int)
    }

    /// The status code.
    public var status: Int
    /// The reason phrase for the status line.
    public var reasonPhrase: String
    /// The complete response headers, `Content-Length` included, in the order they are sent.
    public var headers: HTTPHeaders
    /// The representation the body bytes come from.
    public var body: MockBody
    /// The bytes of ``body`` the response carries (for HEAD: the ones a GET would carry).
    public var bodyRange: Range<Int64>
    /// Whether body bytes are sent at all (false for HEAD).
    public var sendsBody: Bool
    /// How the body ends.
    public var ending: Ending
    /// The wait before the head.
    public var latency: Duration
    /// The most body bytes per second, or nil for no limit.
    public var bytesPerSecond: Int64?

    /// The byte sent after the body by ``Ending/extraBytes(_:)``.
    public static let extraByte: UInt8 = 0x78  // "x"

    /// The number of bytes that follow the head on the wire.
    public var wireLength: Int64 {
        guard sendsBody else { return 0 }
        return switch ending {
        case .complete: Int64(bodyRange.count)
        case .dropAfter(let count), .stallAfter(let count): min(count, Int64(bodyRange.count))
        case .extraBytes(let extra): Int64(bodyRange.count) + Int64(extra)
        }
    }

    /// Whether the server closes the connection after the wire bytes.
    public var closesConnection: Bool {
        switch ending {
        case .complete, .stallAfter: false
        case .dropAfter, .extraBytes: sendsBody
        }
    }

    /// Copies the wire bytes of `range` (offsets counted from the first body byte) into `buffer`.
    ///
    /// - Precondition: `range` lies within `0..<wireLength`; `buffer` holds `range.count` bytes.
    public func copyWireBytes(in range: Range<Int64>, into buffer: UnsafeMutableRawBufferPointer) {
        precondition(range.lowerBound >= 0 && range.upperBound <= wireLength, "range \(range) beyond the wire bytes")
        let bodyCount = Int64(bodyRange.count)
        let fromBody = range.clamped(to: 0..<bodyCount)
        if !fromBody.isEmpty {
            body.copyBytes(
                in: (bodyRange.lowerBound + fromBody.lowerBound)..<(bodyRange.lowerBound + fromBody.upperBound),
                into: buffer)
        }
        let extraStart = fromBody.isEmpty ? 0 : fromBody.count
        if extraStart < range.count {
            let extra = UnsafeMutableRawBufferPointer(rebasing: buffer[extraStart..<range.count])
            extra.initializeMemory(as: UInt8.self, repeating: Self.extraByte)
        }
    }

    /// The head as HTTP/1.1 text: status line, header lines and the blank line.
    public var headText: String {
        var text = "HTTP/1.1 \(status) \(reasonPhrase)\r\n"
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        return text + "\r\n"
    }

    /// Creates a plan with every field given; most callers want ``init(request:route:requestNumber:)``.
    public init(
        status: Int, reasonPhrase: String? = nil, headers: HTTPHeaders, body: MockBody, bodyRange: Range<Int64>,
        sendsBody: Bool, ending: Ending = .complete, latency: Duration = .zero, bytesPerSecond: Int64? = nil
    ) {
        self.status = status
        self.reasonPhrase = reasonPhrase ?? Self.reasonPhrase(for: status)
        self.headers = headers
        self.body = body
        self.bodyRange = bodyRange
        self.sendsBody = sendsBody
        self.ending = ending
        self.latency = latency
        self.bytesPerSecond = bytesPerSecond
    }

    /// Plans the answer of `route` to `request`; a nil route answers 404.
    ///
    /// In order: 404 without a route; 405 for a method other than GET and HEAD; 401 with the
    /// route's challenges when it demands an `Authorization` the request lacks; then, for a
    /// 200 route that honours ranges and a request with a `Range`: an `If-Range` that does not
    /// match the current validator strongly (tag for tag, or date for date) gets the whole body
    /// with 200; an unsatisfiable range gets 416 with `Content-Range: bytes */length`; any other
    /// single range gets 206 with its `Content-Range` (also after an `If-Range` mismatch under
    /// ``MockFault/ignoreIfRange``). A malformed or multi-range `Range` is
    /// ignored (200). Faults then change what goes on the wire.
    ///
    /// - Parameter request: the request as the server received it.
    /// - Parameter route: the route for its path and host; nil when there is none.
    /// - Parameter requestNumber: how many requests the route has answered, this one included;
    ///   it makes ``MockEntityTag/changesOnEveryRequest`` tags.
    public init(request: MockRequest, route: MockRoute?, requestNumber: Int = 1) {
        let isHead = request.method == "HEAD"
        guard let route else {
            self = Self.text(404, "not found\n", sendsBody: !isHead)
            return
        }
        guard request.method == "GET" || isHead else {
            self = Self.text(405, "method not allowed\n", sendsBody: true, extra: [("Allow", "GET, HEAD")])
            self.latency = route.latency
            return
        }
        if let requirement = route.authorization, request.headers["Authorization"] != requirement.expectedAuthorization
        {
            self = Self.text(
                401, "unauthorized\n", sendsBody: !isHead,
                extra: requirement.challenges.map { ("WWW-Authenticate", $0) })
            self.latency = route.latency
            return
        }

        let total = route.body.count
        let entityTag = route.entityTag.value(forRequestNumber: requestNumber)
        var status = route.status
        var bodyRange: Range<Int64> = 0..<total
        var contentRange: String?

        if route.status == 200, route.honoursRanges, let rangeValue = request.headers["Range"] {
            let ignoresRange = route.faults.contains(.ignoreRange)
            let validatorMatches =
                route.faults.contains(.ignoreIfRange)
                || request.headers["If-Range"].map {
                    Self.ifRangeMatches($0, entityTag: entityTag, lastModified: route.lastModified)
                } ?? true
            if validatorMatches, !ignoresRange {
                switch Self.parseRange(rangeValue, completeLength: total) {
                case .ignored:
                    break
                case .unsatisfiable:
                    status = 416
                    bodyRange = 0..<0
                    contentRange = "bytes */\(total)"
                case .satisfiable(let range):
                    status = 206
                    bodyRange = range
                    var first = range.lowerBound
                    for case .wrongContentRange(let shift) in route.faults { first = max(0, first + shift) }
                    contentRange = "bytes \(first)-\(first + Int64(range.count) - 1)/\(total)"
                }
            }
        }

        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: String(bodyRange.count))
        if route.honoursRanges { headers.add(name: "Accept-Ranges", value: "bytes") }
        if let entityTag { headers.add(name: "ETag", value: entityTag) }
        if let lastModified = route.lastModified { headers.add(name: "Last-Modified", value: lastModified) }
        if let contentRange { headers.add(name: "Content-Range", value: contentRange) }
        var replaced: [String] = []
        for field in route.headers where !replaced.contains(where: { $0.caseInsensitiveEquals(field.name) }) {
            replaced.append(field.name)
            headers.remove(name: field.name)
            for value in route.headers.values(for: field.name) { headers.add(name: field.name, value: value) }
        }

        var ending = Ending.complete
        let count = Int64(bodyRange.count)
        if let drop = route.faults.lazy.compactMap(\.dropCount).first, drop < count {
            ending = .dropAfter(max(0, drop))
        } else if let stall = route.faults.lazy.compactMap(\.stallCount).first, stall < count {
            ending = .stallAfter(max(0, stall))
        } else if let extra = route.faults.lazy.compactMap(\.extraCount).first, extra > 0 {
            ending = .extraBytes(extra)
        }

        self.init(
            status: status, headers: headers, body: route.body, bodyRange: bodyRange, sendsBody: !isHead,
            ending: ending, latency: route.latency, bytesPerSecond: route.bytesPerSecond)
    }

    private static func text(
        _ status: Int, _ text: String, sendsBody: Bool, extra: [(String, String)] = []
    ) -> MockResponsePlan {
        let body = MockBody.text(text)
        var headers: HTTPHeaders = ["Content-Type": "text/plain", "Content-Length": String(body.count)]
        for (name, value) in extra { headers.add(name: name, value: value) }
        return MockResponsePlan(
            status: status, headers: headers, body: body, bodyRange: 0..<body.count, sendsBody: sendsBody)
    }

    /// Whether an `If-Range` value matches the current validators with the strong comparison
    /// of RFC 9110 §13.1.5: an entity tag matches only a strong, identical `ETag`; a date
    /// matches only an identical `Last-Modified`.
    public static func ifRangeMatches(_ value: String, entityTag: String?, lastModified: String?) -> Bool {
        let value = value.trimmed
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            guard let entityTag, !entityTag.hasPrefix("W/"), !value.hasPrefix("W/") else { return false }
            return value == entityTag
        }
        return lastModified == value
    }

    /// The outcome of reading a `Range` header against a representation's length.
    public enum RangeRequest: Sendable, Hashable {
        /// Malformed, not in bytes, or several ranges: served as if absent.
        case ignored
        /// No byte of the range exists.
        case unsatisfiable
        /// These bytes, clamped to the representation.
        case satisfiable(Range<Int64>)
    }

    /// Reads a `Range` value (`bytes=a-b`, `bytes=a-`, `bytes=-n`) for a representation of
    /// `completeLength` bytes.
    public static func parseRange(_ value: String, completeLength: Int64) -> RangeRequest {
        let value = value.trimmed
        guard value.lowercased().hasPrefix("bytes=") else { return .ignored }
        let spec = value.dropFirst(6).trimmingSpaces
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .ignored }
        let firstText = spec[..<dash].trimmingSpaces
        let lastText = spec[spec.index(after: dash)...].trimmingSpaces
        if firstText.isEmpty {
            guard let suffix = Int64(lastText), suffix >= 0 else { return .ignored }
            guard suffix > 0, completeLength > 0 else { return .unsatisfiable }
            return .satisfiable(max(0, completeLength - suffix)..<completeLength)
        }
        guard let first = Int64(firstText), first >= 0 else { return .ignored }
        var last = completeLength - 1
        if !lastText.isEmpty {
            guard let value = Int64(lastText), value >= first else { return .ignored }
            last = min(value, completeLength - 1)
        }
        guard first < completeLength else { return .unsatisfiable }
        return .satisfiable(first..<(last + 1))
    }

    /// The reason phrase of common statuses.
    public static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 407: "Proxy Authentication Required"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status \(status)"
        }
    }
}

extension MockFault {
    fileprivate var dropCount: Int64? {
        if case .dropAfter(let count) = self { count } else { nil }
    }
    fileprivate var stallCount: Int64? {
        if case .stallAfter(let count) = self { count } else { nil }
    }
    fileprivate var extraCount: Int? {
        if case .extraBytes(let count) = self { count } else { nil }
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
