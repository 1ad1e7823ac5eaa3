import PeregrineMockTransport
import PeregrineTransport

/// What a backend did in a conformance scenario, normalised so that backends compare equal.
///
/// URLs have their base replaced (``ConformanceBases/normalize(_:)``); progress events are
/// left out (backends coalesce them differently); a head is reduced to its status,
/// `Content-Length`, `Content-Range`, `ETag`, and, when present, `Retry-After` and every
/// `WWW-Authenticate`; an error to its code, HTTP status and errno.
public struct ConformanceTrace: Sendable, Hashable, CustomStringConvertible {
    /// The events other than progress, e.g. `head 200 length=10 etag="v1"`,
    /// `redirected 302 BASE/a -> BASE/b`, `completed received=10 redirects=0`,
    /// `failed range not honoured status=200`.
    public var events: [String]
    /// The requests the server received, e.g. `GET BASE/a range=bytes=10- if-range="v1"`:
    /// method, URL, and the `Range`, `If-Range` and `Authorization` headers when sent.
    public var requests: [String]
    /// What reached the sink.
    public var sink: ConformanceSinkRecord
    /// Breaches of the Transport rules the runner saw (writes before the head, while paused,
    /// after a cancel, out of place; events after the completion; no flush before success; a
    /// transfer that never completed). Empty for a conforming backend.
    public var violations: [String]

    /// Creates a trace.
    public init(events: [String], requests: [String], sink: ConformanceSinkRecord, violations: [String]) {
        self.events = events
        self.requests = requests
        self.sink = sink
        self.violations = violations
    }

    public var description: String {
        var lines = ["events:"] + events.map { "  \($0)" }
        lines += ["requests:"] + requests.map { "  \($0)" }
        lines += ["sink: \(sink)"]
        if !violations.isEmpty { lines += ["violations:"] + violations.map { "  \($0)" } }
        return lines.joined(separator: "\n")
    }

    /// The normalised form of an event; nil for progress.
    public static func describe(_ event: TransferEvent, bases: ConformanceBases) -> String? {
        switch event {
        case .progress:
            return nil
        case .redirected(let redirect):
            return "redirected \(redirect.status) \(bases.normalize(redirect.from)) -> \(bases.normalize(redirect.to))"
        case .head(let head):
            return describe(head)
        case .completed(.success(let summary)):
            return "completed received=\(summary.receivedBytes) redirects=\(summary.redirectCount)"
        case .completed(.failure(let error)):
            var text = "failed \(error.code)"
            if let status = error.httpStatus { text += " status=\(status)" }
            if let errno = error.errno { text += " errno=\(errno)" }
            return text
        }
    }

    /// The normalised form of a head.
    public static func describe(_ head: ResponseHead) -> String {
        var text = "head \(head.status)"
        if let length = head.headers["Content-Length"] { text += " length=\(length)" }
        if let range = head.headers["Content-Range"] { text += " range=\(range)" }
        if let tag = head.headers["ETag"] { text += " etag=\(tag)" }
        if let retryAfter = head.headers["Retry-After"] { text += " retry-after=\(retryAfter)" }
        let challenges = head.headers.values(for: "WWW-Authenticate")
        if !challenges.isEmpty { text += " www-authenticate=[\(challenges.joined(separator: " | "))]" }
        return text
    }

    /// The normalised form of a request the server received.
    public static func describe(_ request: MockRequest, bases: ConformanceBases) -> String {
        var text = "\(request.method) \(bases.normalize(request.url))"
        for name in ["Range", "If-Range", "Authorization"] {
            if let value = request.headers[name] { text += " \(name.lowercased())=\(value)" }
        }
        return text
    }
}
