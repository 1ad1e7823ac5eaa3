import PeregrineCore
import PeregrineTransport

/// Server trust as a host → evaluation map, as Alamofire's `ServerTrustManager`: each request
/// gets the `TrustPolicy` of its host.
///
/// Keys are host names or IP addresses (case-insensitive), or `*.example.com` for every
/// subdomain of `example.com` (not `example.com` itself). An exact key wins over a wildcard,
/// a longer wildcard over a shorter one, and hosts without a key get the default (the
/// system's CAs unless told otherwise).
///
/// ```swift
/// let trust = try ServerTrustMap(evaluations: [
///     "files.example.com": .pinnedPublicKeys(["n4Xn…=", "Y2Ur…="]),   // current and next key
///     "intranet.local": .customCA(bundlePath: "/etc/company-ca.pem"),
///     "192.168.1.20": .insecure,
/// ], onWarning: { logger.warning("\($0)") })
/// request = trust.applying(to: request)
/// ```
///
/// `insecure` is an opt-out for named hosts only: it cannot be the default, and every request
/// it is handed out for is reported to `onWarning`.
///
/// A request it is applied to carries the policy of its own host and a resolver for every other
/// host: the transport checks each hop under the policy of that hop's host, so pins are checked
/// again after a redirect to another host, and one host's `insecure` opt-out never reaches another.
public struct ServerTrustMap: Sendable {
    /// The evaluation of hosts without a key.
    public let defaultEvaluation: ServerTrustEvaluation
    /// The evaluations by host, keys normalised (lower-case, no brackets, no trailing dot).
    public let evaluations: [String: ServerTrustEvaluation]
    private let onWarning: (@Sendable (ServerTrustWarning) -> Void)?

    /// Creates a map and checks every entry.
    ///
    /// - Parameters:
    ///   - defaultEvaluation: for hosts without a key; `.insecure` is refused.
    ///   - evaluations: by host name, IP address or `*.domain`.
    ///   - onWarning: called (on the calling thread of ``policy(for:)``; for a redirect target, the
    ///     transport's thread) each time an insecure policy is handed out. Must not block.
    /// - Throws: ``TrustConfigurationError`` for an insecure default, a malformed host key, a bad
    ///   pin or an empty CA path.
    public init(
        default defaultEvaluation: ServerTrustEvaluation = .systemCAs,
        evaluations: [String: ServerTrustEvaluation] = [:],
        onWarning: (@Sendable (ServerTrustWarning) -> Void)? = nil
    ) throws(TrustConfigurationError) {
        guard !defaultEvaluation.isInsecure else {
            throw TrustConfigurationError(
                .insecureDefault, "insecure may only be given to hosts named one by one, never as the default")
        }
        try defaultEvaluation.validate()
        var normalized: [String: ServerTrustEvaluation] = [:]
        for (host, evaluation) in evaluations {
            let key = Self.normalize(host)
            let name = key.hasPrefix("*.") ? String(key.dropFirst(2)) : key
            guard !name.isEmpty, !name.contains("*"),
                name.unicodeScalars.allSatisfy({
                    $0.value > 0x20 && $0.value < 0x7F && !"/?#@ \\".unicodeScalars.contains($0)
                })
            else {
                throw TrustConfigurationError(
                    .invalidHost,
                    "\"\(AuthenticationText.excerpt(host, limit: 60))\" is not a host name, an IP address or *.domain")
            }
            try evaluation.validate()
            normalized[key] = evaluation
        }
        self.defaultEvaluation = defaultEvaluation
        self.evaluations = normalized
        self.onWarning = onWarning
    }

    /// The evaluation for a host: its own key, else the longest matching `*.` key, else the default.
    public func evaluation(forHost host: String) -> ServerTrustEvaluation {
        let host = Self.normalize(host)
        if let exact = evaluations[host] { return exact }
        var suffix = Substring(host)
        while let dot = suffix.firstIndex(of: ".") {
            suffix = suffix[suffix.index(after: dot)...]
            if let wildcard = evaluations["*." + suffix] { return wildcard }
        }
        return defaultEvaluation
    }

    /// The policy for a request to `url`; reports a ``ServerTrustWarning`` when it is insecure.
    public func policy(for url: DownloadURL) -> TrustPolicy {
        let evaluation = evaluation(forHost: url.host)
        if evaluation.isInsecure {
            onWarning?(ServerTrustWarning(host: url.host, url: url.string))
        }
        return evaluation.policy
    }

    /// `request` with the trust policy of its host, and ``policy(for:)`` as the resolver for the
    /// other hosts its redirects reach (`TransferRequest.trustForHop`).
    ///
    /// An insecure policy is reported to `onWarning` here for the request's host, and again by the
    /// resolver for each redirect to an insecure host.
    public func applying(to request: TransferRequest) -> TransferRequest {
        var request = request
        request.trust = policy(for: request.url)
        request.trustForHop = { [self] hop in policy(for: hop) }
        return request
    }

    private static func normalize(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        while host.hasSuffix(".") { host.removeLast() }
        return host
    }
}
