import PeregrineAuth
import Testing

@Suite("Digest challenge checks")
struct DigestChallengeTests {
    func digest(_ value: String) throws -> DigestChallenge {
        try DigestChallenge(AuthenticationChallengeParser().parse(value)[0])
    }

    func code(_ value: String) -> ChallengeError.Code? {
        do {
            _ = try digest(value)
            return nil
        } catch let error as ChallengeError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test func missingRealmIsATypedError() {
        #expect(code(#"Digest nonce="n""#) == .missingRealm)
    }

    @Test func missingOrEmptyNonceIsATypedError() {
        #expect(code(#"Digest realm="r""#) == .missingNonce)
        #expect(code(#"Digest realm="r", nonce="""#) == .missingNonce)
    }

    @Test func unknownAlgorithmIsATypedErrorThatNamesIt() throws {
        do {
            _ = try digest(#"Digest realm="r", nonce="n", algorithm=SHA-1024"#)
            Issue.record("accepted an unknown algorithm")
        } catch let error as ChallengeError {
            #expect(error.code == .unsupportedAlgorithm)
            #expect(error.message.contains("SHA-1024"))
        }
    }

    @Test func qopWithoutAuthIsATypedError() {
        #expect(code(#"Digest realm="r", nonce="n", qop="auth-conf, other""#) == .unsupportedQualityOfProtection)
    }

    @Test func everyAlgorithmNameIsRecognisedIgnoringCase() throws {
        for algorithm in DigestHashAlgorithm.allCases {
            let parsed = try digest(#"Digest realm="r", nonce="n", algorithm=\#(algorithm.rawValue.lowercased())"#)
            #expect(parsed.algorithm == algorithm)
        }
        #expect(try digest(#"Digest realm="r", nonce="n""#).algorithm == .md5)
        #expect(try digest(#"Digest realm="r", nonce="n""#).namesAlgorithm == false)
    }

    @Test func flagsAndListsAreRead() throws {
        let parsed = try digest(
            #"Digest realm="r", nonce="n", qop="auth-int,auth", stale=TRUE, userhash=true, charset=utf-8, domain="/a /b http://other.example/c", opaque="o""#
        )
        #expect(parsed.qualityOfProtection == [.authInt, .auth])
        #expect(parsed.preferredQualityOfProtection == .auth)
        #expect(parsed.isStale && parsed.userhash && parsed.isUTF8)
        #expect(parsed.domain == ["/a", "/b", "http://other.example/c"])
        #expect(parsed.opaque == "o")
    }

    @Test func anotherSchemeIsRefused() {
        #expect(code(#"Basic realm="r""#) == .unexpectedScheme)
    }
}
