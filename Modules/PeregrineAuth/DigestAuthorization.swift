import PeregrineVerification

/// The `Authorization` (or `Proxy-Authorization`) value answering a Digest challenge, computed
/// as RFC 7616 §3.4 says.
///
/// A pure value: the same inputs always give the same header, which is how the RFC's worked
/// examples are checked byte for byte. The parameters are written in the order of the RFC's
/// examples: `username` (or `username*`), `realm`, `uri`, `algorithm`, `nonce`, `nc`, `cnonce`,
/// `qop`, `response`, `opaque`, `userhash`.
public struct DigestAuthorization: Sendable, Hashable {
    /// The challenge answered.
    public var challenge: DigestChallenge
    /// The user name and password.
    public var credential: Credential
    /// The request method, e.g. `GET`.
    public var method: String
    /// The request-target: the path and query as sent on the request line (for a proxy, the
    /// absolute URI).
    public var uri: String
    /// The number of requests made with this nonce, this one included (`nc`).
    public var nonceCount: UInt32
    /// The client nonce of this request (`cnonce`).
    public var clientNonce: String
    /// For a `-sess` algorithm: the client nonce of the first request with this nonce, which
    /// A1 keeps for the nonce's whole life (RFC 7616 §3.4.2); nil to use ``clientNonce``.
    public var sessionClientNonce: String?
    /// The `qop` to answer with; nil for an RFC 2069 answer without `qop`.
    public var qualityOfProtection: DigestQualityOfProtection?
    /// The request body, hashed for `qop=auth-int`; empty for GET and HEAD.
    public var entityBody: [UInt8]

    /// Creates an answer; `qop` defaults to the challenge's ``DigestChallenge/preferredQualityOfProtection``.
    public init(
        challenge: DigestChallenge, credential: Credential, method: String, uri: String, nonceCount: UInt32 = 1,
        clientNonce: String, sessionClientNonce: String? = nil, entityBody: [UInt8] = []
    ) {
        self.challenge = challenge
        self.credential = credential
        self.method = method
        self.uri = uri
        self.nonceCount = nonceCount
        self.clientNonce = clientNonce
        self.sessionClientNonce = sessionClientNonce
        self.qualityOfProtection = challenge.preferredQualityOfProtection
        self.entityBody = entityBody
    }

    /// The hex `response` value.
    ///
    /// - Throws: `VerificationError` when OpenSSL does not offer the hash.
    public func response() throws(VerificationError) -> String {
        let algorithm = challenge.algorithm
        let user = credential.normalizedUser
        var a1 = try algorithm.hex("\(user):\(challenge.realm):\(credential.normalizedPassword)")
        if algorithm.isSession {
            a1 = try algorithm.hex("\(a1):\(challenge.nonce):\(sessionClientNonce ?? clientNonce)")
        }
        var a2 = "\(method):\(uri)"
        if qualityOfProtection == .authInt {
            a2 += ":" + (try StreamingHasher.digest(algorithm.hash, of: entityBody).hexString)
        }
        let ha2 = try algorithm.hex(a2)
        guard let qop = qualityOfProtection else {
            return try algorithm.hex("\(a1):\(challenge.nonce):\(ha2)")
        }
        return try algorithm.hex(
            "\(a1):\(challenge.nonce):\(nonceCountText):\(clientNonce):\(qop.rawValue):\(ha2)")
    }

    /// `nc` as sent: eight lower-case hex digits.
    public var nonceCountText: String { AuthenticationText.nonceCountText(nonceCount) }

    /// The `username` value sent when the challenge asks for `userhash`: H(user ":" realm).
    public func hashedUser() throws(VerificationError) -> String {
        try challenge.algorithm.hex("\(credential.normalizedUser):\(challenge.realm)")
    }

    /// The complete header value, starting with `Digest `.
    ///
    /// - Throws: `VerificationError` when OpenSSL does not offer the hash.
    public func headerValue() throws(VerificationError) -> String {
        var parts: [String] = []
        let user = credential.normalizedUser
        if challenge.userhash {
            parts.append("username=\(AuthenticationText.quoted(try hashedUser()))")
        } else if user.unicodeScalars.allSatisfy({ (0x20..<0x7F).contains($0.value) }) {
            parts.append("username=\(AuthenticationText.quoted(user))")
        } else {
            // RFC 7616 §3.4.4: a name outside quoted-string's ASCII goes as an RFC 8187 ext-value.
            parts.append("username*=UTF-8''\(Self.percentEncoded(user))")
        }
        parts.append("realm=\(AuthenticationText.quoted(challenge.realm))")
        parts.append("uri=\(AuthenticationText.quoted(uri))")
        if challenge.namesAlgorithm { parts.append("algorithm=\(challenge.algorithm.rawValue)") }
        parts.append("nonce=\(AuthenticationText.quoted(challenge.nonce))")
        if let qop = qualityOfProtection {
            parts.append("nc=\(nonceCountText)")
            parts.append("cnonce=\(AuthenticationText.quoted(clientNonce))")
            parts.append("qop=\(qop.rawValue)")
        }
        parts.append("response=\(AuthenticationText.quoted(try response()))")
        if let opaque = challenge.opaque { parts.append("opaque=\(AuthenticationText.quoted(opaque))") }
        if challenge.userhash { parts.append("userhash=true") }
        return "Digest " + parts.joined(separator: ", ")
    }

    /// RFC 8187 `value-chars`: attr-char as is, every other byte as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var result: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"),
                UInt8(ascii: "&"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"),
                UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                result.append(byte)
            default:
                result += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
