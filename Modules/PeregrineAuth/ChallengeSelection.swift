/// The challenges of one response that this client can answer, strongest first.
///
/// A pure value, tested without I/O: Digest ranks by hash (SHA-512-256, SHA-256, MD5), then
/// Basic; challenges of equal rank keep the server's order. Challenges that cannot be answered
/// (another scheme, a scheme the caller did not allow, a Digest challenge without a nonce or
/// with an unknown algorithm, a Basic challenge without a realm) are kept as reasons, for the
/// error message when nothing is left.
public struct ChallengeSelection: Sendable, Hashable {
    /// A challenge that can be answered.
    public struct Candidate: Sendable, Hashable {
        /// The scheme.
        public var scheme: AuthenticationScheme
        /// The challenge as parsed.
        public var challenge: AuthenticationChallenge
        /// The checked Digest challenge, for Digest.
        public var digest: DigestChallenge?
        /// The realm.
        public var realm: String
        /// Higher is stronger.
        public var strength: Int
    }

    /// Every challenge of the response, in order.
    public var challenges: [AuthenticationChallenge]
    /// The answerable challenges, strongest first.
    public var candidates: [Candidate]
    /// Why the other challenges (and unreadable fields) were passed over.
    public var skipped: [String]

    /// Reads the challenge fields of a response.
    ///
    /// - Parameters:
    ///   - fields: the values of every `WWW-Authenticate` (or `Proxy-Authenticate`) field.
    ///   - allowed: the schemes the caller allows.
    ///   - parser: the parser, with its limits.
    public init(
        fields: [String], allowed: Set<AuthenticationScheme> = Set(AuthenticationScheme.allCases),
        parser: AuthenticationChallengeParser = AuthenticationChallengeParser()
    ) {
        let parsed = parser.parse(fields: fields)
        challenges = parsed.challenges
        skipped = parsed.errors.map(\.description)
        candidates = []
        for challenge in parsed.challenges {
            if challenge.hasScheme("Digest") {
                guard allowed.contains(.digest) else {
                    skipped.append("Digest is not allowed")
                    continue
                }
                do {
                    let digest = try DigestChallenge(challenge)
                    guard digest.algorithm.isAvailable else {
                        skipped.append("\(digest.algorithm) is not available in this OpenSSL")
                        continue
                    }
                    candidates.append(
                        Candidate(
                            scheme: .digest, challenge: challenge, digest: digest, realm: digest.realm,
                            strength: 10 + digest.algorithm.strength))
                } catch {
                    skipped.append(error.description)
                }
            } else if challenge.hasScheme("Basic") {
                guard allowed.contains(.basic) else {
                    skipped.append("Basic is not allowed")
                    continue
                }
                guard let realm = challenge.realm else {
                    skipped.append(ChallengeError(.missingRealm, "a Basic challenge without a realm").description)
                    continue
                }
                candidates.append(Candidate(scheme: .basic, challenge: challenge, realm: realm, strength: 1))
            } else {
                skipped.append("unsupported scheme \(AuthenticationText.excerpt(challenge.scheme, limit: 30))")
            }
        }
        // A stable sort: equal strengths keep the server's order.
        candidates = candidates.enumerated()
            .sorted { ($0.element.strength, -$0.offset) > ($1.element.strength, -$1.offset) }
            .map(\.element)
    }

    /// A short account of what the response offered and why nothing could be answered.
    public var explanation: String {
        guard !challenges.isEmpty || !skipped.isEmpty else { return "the response carries no challenge" }
        let offered = challenges.map { AuthenticationText.excerpt($0.scheme, limit: 30) }
        var text = offered.isEmpty ? "no readable challenge" : "offered " + offered.joined(separator: ", ")
        if !skipped.isEmpty { text += " (" + skipped.prefix(4).joined(separator: "; ") + ")" }
        return text
    }
}
