/// How a server's TLS certificate is checked for one host of a request.
///
/// The Auth module keeps a host → policy map and hands the transport the policy of the
/// request's host (``TransferRequest/trust``) and a resolver for the other hosts a redirect
/// reaches (``TransferRequest/trustForHop``); the transport applies
/// ``TransferRequest/trust(for:)`` to every hop, so each host is checked under its own policy.
public struct TrustPolicy: Sendable, Hashable {
    /// Where trusted certificate authorities come from.
    public enum Authorities: Sendable, Hashable {
        /// The system's CA store.
        case system
        /// A PEM file of CA certificates, used instead of the system's store.
        case file(path: String)
    }

    /// The trusted authorities.
    public var authorities: Authorities
    /// Base64 SHA-256 digests of acceptable public keys (SPKI); empty for no pinning.
    /// Several pins allow for key rotation; one must match.
    public var pinnedPublicKeySHA256: [String]
    /// Whether certificate checks are off. Only ever set for a host the user named.
    public var isInsecure: Bool

    /// Creates a policy.
    public init(authorities: Authorities = .system, pinnedPublicKeySHA256: [String] = [], isInsecure: Bool = false) {
        self.authorities = authorities
        self.pinnedPublicKeySHA256 = pinnedPublicKeySHA256
        self.isInsecure = isInsecure
    }

    /// The system's CAs, full verification. The default.
    public static let system = TrustPolicy()

    /// Trust the CAs in a PEM file instead of the system's.
    public static func customCA(path: String) -> TrustPolicy {
        TrustPolicy(authorities: .file(path: path))
    }

    /// Verify as usual and also require one of these public keys (base64 SHA-256 of the SPKI).
    public static func pinnedPublicKeys(_ pins: [String], authorities: Authorities = .system) -> TrustPolicy {
        TrustPolicy(authorities: authorities, pinnedPublicKeySHA256: pins)
    }

    /// No certificate checks. Only for a host the user explicitly opted out; callers log a warning.
    public static let insecure = TrustPolicy(isInsecure: true)
}
