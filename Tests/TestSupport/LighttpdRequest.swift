import PeregrineCore

/// A request as lighttpd logged it with `debug.log-request-header`: the request line and the
/// header fields, in order.
public struct LighttpdRequest: Sendable, Hashable, CustomStringConvertible {
    /// The request line, e.g. `GET /digest/file.bin HTTP/1.1`.
    public var requestLine: String
    /// The header fields as received.
    public var headers: HTTPHeaders

    /// Creates a request.
    public init(requestLine: String, headers: HTTPHeaders) {
        self.requestLine = requestLine
        self.headers = headers
    }

    /// The method, e.g. `GET`.
    public var method: String { requestLine.split(separator: " ").first.map(String.init) ?? "" }

    /// The request-target as sent, e.g. `/digest/file.bin?x=1`.
    public var target: String {
        let parts = requestLine.split(separator: " ")
        return parts.count > 1 ? String(parts[1]) : ""
    }

    /// The request-target without the query.
    public var path: String { target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target }

    public var description: String { requestLine }

    /// Reads every request out of a lighttpd error log. Lines look like
    /// `2026-01-01 12:00:00: (connections.c.770) fd:11 rqst: GET /a HTTP/1.1`, then one line per
    /// header field, then an empty `rqst: ` line.
    static func parse(log: String) -> [LighttpdRequest] {
        var requests: [LighttpdRequest] = []
        var current: LighttpdRequest?
        for line in log.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let marker = line.range(of: " rqst: ") ?? line.range(of: " rqst:") else { continue }
            var content = String(line[marker.upperBound...])
            while content.hasSuffix("\r") { content.removeLast() }
            if content.isEmpty {
                if let done = current { requests.append(done) }
                current = nil
            } else if var request = current, let colon = content.firstIndex(of: ":") {
                let value = content[content.index(after: colon)...].drop { $0 == " " }
                request.headers.add(name: String(content[..<colon]), value: String(value))
                current = request
            } else {
                current = LighttpdRequest(requestLine: content, headers: HTTPHeaders())
            }
        }
        if let current { requests.append(current) }
        return requests
    }
}
