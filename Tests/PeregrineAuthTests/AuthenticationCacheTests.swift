import PeregrineAuth
import PeregrineCore
import PeregrineTransport
import Testing

/// The cache through its public surface: what it remembers, and the preemptive headers an
/// ``AuthenticatingTransport`` then sends (observed on the mock transport).
@Suite("Authentication cache")
struct AuthenticationCacheTests {
    let credential = Credential(user: "u", password: "p")

    @Test func digestNonceCountStartsAtZeroAndIsPerSpace() throws {
        let cache = AuthenticationCache()
        let url = try DownloadURL("https://files.example/a/b.bin")
        cache.rememberDigest(DigestChallenge(realm: "r", nonce: "n1"), credential: credential, for: url)
        let space = ProtectionSpace(url: url, realm: "r")
        #expect(cache.digestNonce(for: space)?.nonce == "n1")
        #expect(cache.digestNonce(for: space)?.count == 0)
        #expect(cache.scheme(for: space) == .digest)
        #expect(cache.digestNonce(for: ProtectionSpace(url: url, realm: "other")) == nil)
    }

    @Test func forgettingAnOriginForgetsEveryRealm() throws {
        let cache = AuthenticationCache()
        let url = try DownloadURL("https://files.example/a/b.bin")
        cache.rememberDigest(DigestChallenge(realm: "r1", nonce: "n"), credential: credential, for: url)
        try cache.rememberBasic(credential, realm: "r2", for: url)
        #expect(cache.spaces.count == 2)
        cache.forget(ProtectionSpace(url: url))
        #expect(cache.spaces.isEmpty)
    }

    @Test func basicThatCannotBeEncodedIsRefused() throws {
        let cache = AuthenticationCache()
        #expect(throws: CredentialError.self) {
            try cache.rememberBasic(
                Credential(user: "a:b", password: "p"), realm: "r", for: try DownloadURL("https://h/"))
        }
    }
}
