/// A warning from a ``ServerTrustMap``: a request was given the `insecure` policy of a host the
/// user opted out of certificate checks.
///
/// PeregrineAuth does not log by itself; pass a callback to the map and log there
/// (e.g. `logger.warning("\(warning)")`).
public struct ServerTrustWarning: Sendable, Hashable, CustomStringConvertible {
    /// The host whose certificate is not checked.
    public var host: String
    /// The URL of the request.
    public var url: String

    /// Creates a warning.
    public init(host: String, url: String) {
        self.host = host
        self.url = url
    }

    public var description: String {
        "TLS certificate checks are off for \(host) (insecure trust opt-out) while fetching \(url); "
            + "anyone on the network path can read and change this transfer"
    }
}
