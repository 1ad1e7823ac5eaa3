/// The origins a conformance scenario builds its URLs from, and how traces name them.
///
/// On the in-memory transport they are made-up hosts; on a socket backend, loopback servers
/// on two ports. Traces replace them by `BASE`, `OTHER` and `SECURE`, so one expected trace
/// holds for every backend.
public struct ConformanceBases: Sendable, Hashable {
    /// The origin of the request, e.g. `http://mock.test` or `http://127.0.0.1:41234`.
    public var primary: String
    /// A second origin serving the same routes, for cross-origin redirects.
    public var other: String
    /// An https origin serving the same routes, when the backend has one.
    public var secure: String?

    /// Creates bases.
    public init(primary: String, other: String, secure: String? = nil) {
        self.primary = primary
        self.other = other
        self.secure = secure
    }

    /// The bases of `MockTransport` scenarios.
    public static let mock = ConformanceBases(
        primary: "http://mock.test", other: "http://other.test", secure: "https://mock.test")

    /// `url` with a base at its start replaced by `BASE`, `OTHER` or `SECURE`.
    public func normalize(_ url: String) -> String {
        let names = [(primary, "BASE"), (other, "OTHER")] + (secure.map { [($0, "SECURE")] } ?? [])
        // The longest base first: 127.0.0.1:4000 must not eat the start of 127.0.0.1:40001.
        for (base, name) in names.sorted(by: { $0.0.count > $1.0.count }) where url.hasPrefix(base) {
            let rest = url.dropFirst(base.count)
            if rest.isEmpty || rest.first == "/" || rest.first == "?" { return name + rest }
        }
        return url
    }
}
