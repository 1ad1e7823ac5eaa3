import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request as a mock server received it; the server's log keeps these in order.
public struct MockRequest: Sendable, Hashable, CustomStringConvertible {
    /// The method, e.g. `GET` or `HEAD`.
    public var method: String
    /// The full URL asked for, e.g. `http://mock.test/files/a.bin`.
    public var url: String {
        didSet { parts = Self.parts(of: url) }
    }
    /// The request headers as sent (for the in-memory transport: exactly
    /// `TransferRequest.headersToSend(to:)` of the hop).
    public var headers: HTTPHeaders

    /// Creates a request.
    public init(method: String, url: String, headers: HTTPHeaders = [:]) {
        self.method = method
        self.url = url
        self.headers = headers
        parts = Self.parts(of: url)
    }

    /// The path and host of ``url``, parsed once per change of it: the server looks a route up
    /// by both for every request.
    private var parts: (path: String, host: String?)

    /// The path of the URL, percent-encoded as sent, without the query; `/` when empty.
    public var path: String { parts.path }

    /// The host of the URL, lower-cased, without a port; nil when the URL has none.
    public var host: String? { parts.host }

    private static func parts(of url: String) -> (path: String, host: String?) {
        if let plain = PlainHTTPURL(url) { return (plain.path, plain.host) }
        let components = URLComponents(string: url)
        let path = components?.percentEncodedPath ?? ""
        guard var host = components?.host?.lowercased(), !host.isEmpty else { return (path.isEmpty ? "/" : path, nil) }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (path.isEmpty ? "/" : path, host)
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.method == b.method && a.url == b.url && a.headers == b.headers
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(headers)
    }

    public var description: String { "\(method) \(url)" }
}
