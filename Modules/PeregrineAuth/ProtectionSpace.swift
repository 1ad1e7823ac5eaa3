import PeregrineCore

/// Where a set of credentials applies: an origin (scheme, host, port) and the realm its server
/// named in a challenge, as in RFC 9110 §11.5.
///
/// A space without a realm stands for "any realm of this origin": credentials stored for it are
/// used when no credential was stored for the exact realm a server names. A proxy's space is
/// kept apart from an origin server's, even on the same host and port.
public struct ProtectionSpace: Sendable, Hashable, CustomStringConvertible {
    /// The origin whose server (or proxy) asks for the credentials.
    public var origin: Origin
    /// The realm of the challenge, compared exactly (realms are case-sensitive), or nil for any.
    public var realm: String?
    /// Whether this is a proxy's space (`407`, `Proxy-Authenticate`).
    public var isProxy: Bool

    /// Creates a space.
    public init(origin: Origin, realm: String? = nil, isProxy: Bool = false) {
        self.origin = origin
        self.realm = realm
        self.isProxy = isProxy
    }

    /// Creates the space of a URL's origin and a realm.
    public init(url: DownloadURL, realm: String? = nil) {
        self.init(origin: url.origin, realm: realm)
    }

    /// Creates a space from its parts; the scheme and host are lower-cased.
    public init(scheme: String, host: String, port: Int, realm: String? = nil, isProxy: Bool = false) {
        self.init(origin: Origin(scheme: scheme, host: host, port: port), realm: realm, isProxy: isProxy)
    }

    /// The same origin without a realm: the fallback entry of a credential store.
    public var anyRealm: ProtectionSpace {
        ProtectionSpace(origin: origin, realm: nil, isProxy: isProxy)
    }

    public var description: String {
        let kind = isProxy ? "proxy " : ""
        guard let realm else { return "\(kind)\(origin) (any realm)" }
        return "\(kind)\(origin) realm \"\(AuthenticationText.excerpt(realm))\""
    }
}
