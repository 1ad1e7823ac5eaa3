import PeregrineAuth
import Testing

@Suite("Basic (RFC 7617)")
struct BasicAuthorizationTests {
    @Test func aladdinExampleMatches() throws {
        // RFC 7617 §2.
        let header = try BasicAuthorization(Credential(user: "Aladdin", password: "open sesame")).headerValue
        #expect(header == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
    }

    @Test func utf8CharsetExampleMatches() throws {
        // RFC 7617 §2.1: "test" / "123£" in UTF-8.
        let header = try BasicAuthorization(Credential(user: "test", password: "123\u{A3}")).headerValue
        #expect(header == "Basic dGVzdDoxMjPCow==")
    }

    @Test func decomposedCharactersAreNormalisedToNFC() throws {
        let composed = try BasicAuthorization(Credential(user: "Jos\u{E9}", password: "p")).headerValue
        let decomposed = try BasicAuthorization(Credential(user: "Jose\u{301}", password: "p")).headerValue
        #expect(composed == decomposed)
    }

    @Test func colonInUserNameIsRefused() {
        #expect(throws: CredentialError.self) { try BasicAuthorization(Credential(user: "a:b", password: "p")) }
    }

    @Test func controlCharacterIsRefused() {
        #expect(throws: CredentialError.self) { try BasicAuthorization(Credential(user: "a", password: "p\nq")) }
    }

    @Test func passwordNeverAppearsInDescriptions() {
        let credential = Credential(user: "alice", password: "hunter2")
        #expect(!credential.description.contains("hunter2"))
        #expect(!"\(credential)".contains("hunter2"))
    }
}
