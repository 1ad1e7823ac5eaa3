import PeregrineTransport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How one host's TLS certificate is checked: the value a ``ServerTrustMap`` holds per host,
/// made with the leading-dot factories (`.systemCAs`, `.customCA(bundlePath:)`,
/// `.pinnedPublicKeys(_:)`, `.insecure`), as Alamofire's trust evaluators are.
///
/// It describes the check; the transport carries it out on every connection, redirects
/// included (libcurl: `CURLOPT_CAINFO`, `CURLOPT_PINNEDPUBLICKEY`, the verify flags).
public struct ServerTrustEvaluation: Sendable, Hashable, CustomStringConvertible {
    /// The policy handed to the transport.
    public let policy: TrustPolicy
    /// Whether the evaluation was made to pin keys (an empty pin list is then an error).
    private let isPinning: Bool

    private init(policy: TrustPolicy, isPinning: Bool = false) {
        self.policy = policy
        self.isPinning = isPinning
    }

    /// The system's CA store with full verification: the default.
    public static let systemCAs = ServerTrustEvaluation(policy: .system)

    /// The CAs of a PEM bundle instead of the system's, e.g. a company's internal CA.
    public static func customCA(bundlePath: String) -> ServerTrustEvaluation {
        ServerTrustEvaluation(policy: .customCA(path: bundlePath))
    }

    /// Full verification against `authorities`, and the server's public key must be one of
    /// `pins`: base64 SHA-256 digests of the SubjectPublicKeyInfo, with or without `sha256//`.
    /// Give the next key's pin beside the current one to rotate keys without an outage.
    public static func pinnedPublicKeys(
        _ pins: [String], authorities: TrustPolicy.Authorities = .system
    ) -> ServerTrustEvaluation {
        let normalized = pins.map { $0.hasPrefix("sha256//") ? String($0.dropFirst(8)) : $0 }
        return ServerTrustEvaluation(policy: .pinnedPublicKeys(normalized, authorities: authorities), isPinning: true)
    }

    /// No certificate check at all. Only accepted for hosts named in a ``ServerTrustMap``,
    /// which reports a warning each time it hands this policy out.
    public static let insecure = ServerTrustEvaluation(policy: .insecure)

    /// Whether certificate checks are off.
    public var isInsecure: Bool { policy.isInsecure }

    /// Checks that the evaluation can work: pins are 32-byte base64 digests, a CA path is not
    /// empty.
    ///
    /// - Throws: ``TrustConfigurationError`` naming the bad pin or path.
    public func validate() throws(TrustConfigurationError) {
        if case .file(let path) = policy.authorities, path.isEmpty {
            throw TrustConfigurationError(.invalidCABundle, "the CA bundle path is empty")
        }
        if isPinning, policy.pinnedPublicKeySHA256.isEmpty {
            throw TrustConfigurationError(.invalidPin, "public-key pinning needs at least one pin")
        }
        for pin in policy.pinnedPublicKeySHA256 {
            guard let digest = Data(base64Encoded: pin), digest.count == 32 else {
                throw TrustConfigurationError(
                    .invalidPin,
                    "\"\(AuthenticationText.excerpt(pin, limit: 60))\" is not the base64 of a SHA-256 digest (32 bytes)"
                )
            }
        }
    }

    public var description: String {
        if policy.isInsecure { return "insecure (no certificate checks)" }
        var text: String
        switch policy.authorities {
        case .system: text = "system CAs"
        case .file(let path): text = "CA bundle \(path)"
        }
        if !policy.pinnedPublicKeySHA256.isEmpty {
            text +=
                ", pinned to \(policy.pinnedPublicKeySHA256.count) public key"
                + (policy.pinnedPublicKeySHA256.count == 1 ? "" : "s")
        }
        return text
    }
}
