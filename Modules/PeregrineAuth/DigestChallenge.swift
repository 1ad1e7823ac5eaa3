/// A Digest challenge (RFC 7616 §3.3), checked: it has a realm and a nonce, an algorithm this
/// client implements, and a `qop` it can answer.
///
/// Made from a parsed ``AuthenticationChallenge`` with ``init(_:)``; the retrier answers it
/// with ``DigestAuthorization``.
public struct DigestChallenge: Sendable, Hashable {
    /// The realm.
    public var realm: String
    /// The server's nonce.
    public var nonce: String
    /// The opaque value to echo, if any.
    public var opaque: String?
    /// The algorithm (MD5 when the challenge names none).
    public var algorithm: DigestHashAlgorithm
    /// Whether the challenge named its algorithm (it is then echoed in the answer).
    public var namesAlgorithm: Bool
    /// The `qop` values offered that this client implements; empty for an RFC 2069 challenge
    /// without `qop`.
    public var qualityOfProtection: [DigestQualityOfProtection]
    /// `stale=true`: the nonce expired but the credentials were right; answer the new nonce
    /// without asking for credentials again.
    public var isStale: Bool
    /// `userhash=true`: send the hash of user name and realm instead of the user name.
    public var userhash: Bool
    /// Whether the server declared `charset="UTF-8"`.
    public var isUTF8: Bool
    /// The URIs of the protection space from `domain`, empty when the whole origin is meant.
    public var domain: [String]

    /// Creates a challenge from its parts.
    public init(
        realm: String, nonce: String, opaque: String? = nil, algorithm: DigestHashAlgorithm = .md5,
        namesAlgorithm: Bool = true, qualityOfProtection: [DigestQualityOfProtection] = [.auth],
        isStale: Bool = false, userhash: Bool = false, isUTF8: Bool = true, domain: [String] = []
    ) {
        self.realm = realm
        self.nonce = nonce
        self.opaque = opaque
        self.algorithm = algorithm
        self.namesAlgorithm = namesAlgorithm
        self.qualityOfProtection = qualityOfProtection
        self.isStale = isStale
        self.userhash = userhash
        self.isUTF8 = isUTF8
        self.domain = domain
    }

    /// Checks a parsed challenge.
    ///
    /// - Throws: ``ChallengeError`` with ``ChallengeError/Code/unexpectedScheme``,
    ///   ``ChallengeError/Code/missingRealm``, ``ChallengeError/Code/missingNonce``,
    ///   ``ChallengeError/Code/unsupportedAlgorithm`` (naming it) or
    ///   ``ChallengeError/Code/unsupportedQualityOfProtection``.
    public init(_ challenge: AuthenticationChallenge) throws(ChallengeError) {
        guard challenge.hasScheme("Digest") else {
            throw ChallengeError(
                .unexpectedScheme, "expected a Digest challenge, got \(AuthenticationText.excerpt(challenge.scheme))")
        }
        guard let realm = challenge.realm else {
            throw ChallengeError(.missingRealm, "a Digest challenge without a realm")
        }
        guard let nonce = challenge[parameter: "nonce"], !nonce.isEmpty else {
            throw ChallengeError(
                .missingNonce, "the Digest challenge for realm \"\(AuthenticationText.excerpt(realm))\" has no nonce")
        }
        var algorithm = DigestHashAlgorithm.md5
        let name = challenge[parameter: "algorithm"]
        if let name {
            guard let known = DigestHashAlgorithm(name: name) else {
                throw ChallengeError(
                    .unsupportedAlgorithm,
                    "algorithm \"\(AuthenticationText.excerpt(name, limit: 40))\" for realm \"\(AuthenticationText.excerpt(realm))\""
                )
            }
            algorithm = known
        }
        var offered: [DigestQualityOfProtection] = []
        if let qop = challenge[parameter: "qop"] {
            for item in qop.split(separator: ",") {
                if let value = DigestQualityOfProtection(rawValue: String(item).trimmed.lowercased()),
                    !offered.contains(value)
                {
                    offered.append(value)
                }
            }
            guard !offered.isEmpty else {
                throw ChallengeError(
                    .unsupportedQualityOfProtection,
                    "qop \"\(AuthenticationText.excerpt(qop, limit: 40))\" for realm \"\(AuthenticationText.excerpt(realm))\""
                )
            }
        }
        self.init(
            realm: realm,
            nonce: nonce,
            opaque: challenge[parameter: "opaque"],
            algorithm: algorithm,
            namesAlgorithm: name != nil,
            qualityOfProtection: offered,
            isStale: challenge[parameter: "stale"]?.caseInsensitiveEquals("true") ?? false,
            userhash: challenge[parameter: "userhash"]?.caseInsensitiveEquals("true") ?? false,
            isUTF8: challenge[parameter: "charset"]?.caseInsensitiveEquals("UTF-8") ?? false,
            domain: challenge[parameter: "domain"].map { $0.split(separator: " ").map(String.init) } ?? []
        )
    }

    /// The `qop` the answer uses: `auth` when offered, else `auth-int` (the body of a GET or HEAD
    /// is known: it is empty), else none (RFC 2069).
    public var preferredQualityOfProtection: DigestQualityOfProtection? {
        qualityOfProtection.contains(.auth) ? .auth : qualityOfProtection.first
    }
}
