import PeregrineAuth
import PeregrineVerification
import Testing

/// RFC 7616 §3.9's worked examples, byte for byte.
@Suite("Digest: RFC 7616 examples")
struct DigestRFCExampleTests {
    /// §3.9.1: the two challenges of the example response (SHA-256 first, then MD5).
    static let sha256Challenge =
        #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
    static let md5Challenge =
        #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
    static let mufasa = Credential(user: "Mufasa", password: "Circle of Life")
    static let cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"

    /// The `Authorization` values of §3.9.1, on one line as sent.
    static let expectedMD5 =
        #"Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, response="8ca523f5e9506fed4657c9700eebdbec", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
    static let expectedSHA256 =
        #"Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#

    static func challenge(_ value: String) throws -> DigestChallenge {
        try DigestChallenge(AuthenticationChallengeParser().parse(value)[0])
    }

    @Test func md5ExampleMatchesByteForByte() throws {
        let answer = DigestAuthorization(
            challenge: try Self.challenge(Self.md5Challenge), credential: Self.mufasa, method: "GET",
            uri: "/dir/index.html", nonceCount: 1, clientNonce: Self.cnonce)
        #expect(try answer.response() == "8ca523f5e9506fed4657c9700eebdbec")
        #expect(try answer.headerValue() == Self.expectedMD5)
    }

    @Test func sha256ExampleMatchesByteForByte() throws {
        let answer = DigestAuthorization(
            challenge: try Self.challenge(Self.sha256Challenge), credential: Self.mufasa, method: "GET",
            uri: "/dir/index.html", nonceCount: 1, clientNonce: Self.cnonce)
        #expect(try answer.response() == "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1")
        #expect(try answer.headerValue() == Self.expectedSHA256)
    }

    /// §3.9.2: userhash with SHA-512-256 and a non-ASCII user name.
    ///
    /// The RFC prints `username="488869…"` and `response="ae66e6…"`, which do not follow from
    /// its own inputs (RFC Errata ID 4897). The values pinned here were computed independently
    /// (Python's hashlib) from the example's inputs as §3.4.4 and §3.4.1 define them.
    @Test func userhashExampleHashesTheUserName() throws {
        let challenge = try Self.challenge(
            #"Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", charset=UTF-8, userhash=true"#
        )
        #expect(challenge.userhash && challenge.isUTF8 && challenge.algorithm == .sha512_256)
        let answer = DigestAuthorization(
            challenge: challenge, credential: Credential(user: "J\u{E4}s\u{F8}n Doe", password: "Secret, or not?"),
            method: "GET", uri: "/doe.json", nonceCount: 1, clientNonce: "NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v")
        #expect(try answer.hashedUser() == "793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b")
        #expect(try answer.response() == "3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5")
        #expect(
            try answer.headerValue()
                == #"Digest username="793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b", realm="api@example.org", uri="/doe.json", algorithm=SHA-512-256, nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", nc=00000001, cnonce="NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v", qop=auth, response="3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", userhash=true"#
        )
    }

    @Test func decomposedUserNameHashesLikeTheComposedOne() throws {
        let challenge = try Self.challenge(#"Digest realm="r", nonce="n", algorithm=SHA-256, qop="auth""#)
        let composed = DigestAuthorization(
            challenge: challenge, credential: Credential(user: "J\u{E4}s\u{F8}n", password: "p\u{E9}"),
            method: "GET", uri: "/", clientNonce: "c")
        let decomposed = DigestAuthorization(
            challenge: challenge, credential: Credential(user: "Ja\u{308}s\u{F8}n", password: "pe\u{301}"),
            method: "GET", uri: "/", clientNonce: "c")
        #expect(try composed.response() == decomposed.response())
    }

    @Test func nonASCIIUserNameGoesAsExtendedValue() throws {
        let challenge = try Self.challenge(#"Digest realm="r", nonce="n", qop="auth""#)
        let answer = DigestAuthorization(
            challenge: challenge, credential: Credential(user: "J\u{E4}s\u{F8}n Doe", password: "x"), method: "GET",
            uri: "/", clientNonce: "c")
        #expect(try answer.headerValue().hasPrefix("Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, realm=\"r\""))
    }

    @Test func sessionVariantHashesNonceAndClientNonceIntoA1() throws {
        let challenge = try Self.challenge(
            #"Digest realm="r", nonce="abc", algorithm=SHA-256-sess, qop="auth""#)
        let answer = DigestAuthorization(
            challenge: challenge, credential: Credential(user: "u", password: "p"), method: "GET", uri: "/f",
            nonceCount: 2, clientNonce: "second", sessionClientNonce: "first")
        let a1 = try sha256("\(try sha256("u:r:p")):abc:first")
        let expected = try sha256("\(a1):abc:00000002:second:auth:\(try sha256("GET:/f"))")
        #expect(try answer.response() == expected)
    }

    @Test func authIntHashesTheEmptyBody() throws {
        let challenge = try Self.challenge(#"Digest realm="r", nonce="abc", qop="auth-int""#)
        #expect(challenge.preferredQualityOfProtection == .authInt)
        let answer = DigestAuthorization(
            challenge: challenge, credential: Credential(user: "u", password: "p"), method: "HEAD", uri: "/f",
            clientNonce: "c")
        let ha2 = try md5("HEAD:/f:\(try md5(""))")
        #expect(try answer.response() == md5("\(try md5("u:r:p")):abc:00000001:c:auth-int:\(ha2)"))
        #expect(try answer.headerValue().contains("qop=auth-int"))
    }

    @Test func challengeWithoutQopGetsAnRFC2069Answer() throws {
        let challenge = try Self.challenge(#"Digest realm="r", nonce="abc""#)
        let answer = DigestAuthorization(
            challenge: challenge, credential: Credential(user: "u", password: "p"), method: "GET", uri: "/f",
            clientNonce: "unused")
        let expected = try md5("\(try md5("u:r:p")):abc:\(try md5("GET:/f"))")
        #expect(
            try answer.headerValue()
                == #"Digest username="u", realm="r", uri="/f", nonce="abc", response="\#(expected)""#)
    }

    @Test func nonceCountIsEightLowerCaseHexDigits() throws {
        let challenge = try Self.challenge(#"Digest realm="r", nonce="abc", qop="auth""#)
        var answer = DigestAuthorization(
            challenge: challenge, credential: Credential(user: "u", password: "p"), method: "GET", uri: "/",
            clientNonce: "c")
        answer.nonceCount = 0xABC
        #expect(answer.nonceCountText == "00000abc")
        #expect(try answer.headerValue().contains("nc=00000abc"))
    }

    private func md5(_ text: String) throws -> String { try StreamingHasher.digest(.md5, of: text.utf8).hexString }
    private func sha256(_ text: String) throws -> String {
        try StreamingHasher.digest(.sha256, of: text.utf8).hexString
    }
    private func sha512_256(_ text: String) throws -> String {
        try StreamingHasher.digest(.sha512_256, of: text.utf8).hexString
    }
}
