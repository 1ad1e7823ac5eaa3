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
    public var url: String
    /// The request headers as sent (for the in-memory transport: exactly
    /// `TransferRequest.headersToSend(to:)` of the hop).
    public var headers: HTTPHeaders

    /// Creates a request.
    public init(method: String, url: String, headers: HTTPHeaders = [:]) {
        self.method = method
        self.url = url
        self.headers = headers
    }

    /// The path of the URL, percent-encoded as sent, without the query; `/` when empty.
    public var path: String {
        let path = URLComponents(string: url)?.percentEncodedPath ?? ""
        return path.isEmpty ? "/" : path
    }

    /// The host of the URL, lower-cased, without a port; nil when the URL has none.
    public var host: String? {
        guard var host = URLComponents(string: url)?.host?.lowercased(), !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    public var description: String { "\(method) \(url)" }
}
