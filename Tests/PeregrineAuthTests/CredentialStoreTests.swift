import PeregrineAuth
import Testing

@Suite("Credential store")
struct CredentialStoreTests {
    let alice = Credential(user: "alice", password: "a")
    let bob = Credential(user: "bob", password: "b")

    @Test func exactRealmWinsOverTheOriginWideEntry() {
        let store = CredentialStore()
        store.set(alice, for: ProtectionSpace(scheme: "https", host: "files.example", port: 443))
        store.set(bob, for: ProtectionSpace(scheme: "https", host: "files.example", port: 443, realm: "Admin"))
        #expect(
            store.credential(for: ProtectionSpace(scheme: "https", host: "files.example", port: 443, realm: "Admin"))
                == bob)
        #expect(
            store.credential(for: ProtectionSpace(scheme: "https", host: "FILES.example", port: 443, realm: "Other"))
                == alice)
    }

    @Test func realmsAreCaseSensitiveAndOriginsAreNot() {
        let store = CredentialStore()
        store.set(bob, for: ProtectionSpace(scheme: "HTTPS", host: "Files.Example", port: 443, realm: "Admin"))
        #expect(
            store.exactCredential(
                for: ProtectionSpace(scheme: "https", host: "files.example", port: 443, realm: "Admin")) == bob)
        #expect(
            store.credential(for: ProtectionSpace(scheme: "https", host: "files.example", port: 443, realm: "admin"))
                == nil)
    }

    @Test func anotherPortOrSchemeIsAnotherSpace() {
        let store = CredentialStore()
        store.set(alice, for: ProtectionSpace(scheme: "https", host: "h", port: 443))
        #expect(store.credential(for: ProtectionSpace(scheme: "https", host: "h", port: 8443, realm: "r")) == nil)
        #expect(store.credential(for: ProtectionSpace(scheme: "http", host: "h", port: 443, realm: "r")) == nil)
    }

    @Test func proxySpacesAreSeparate() {
        let store = CredentialStore()
        store.set(alice, for: ProtectionSpace(scheme: "http", host: "proxy", port: 3128, isProxy: true))
        #expect(store.credential(for: ProtectionSpace(scheme: "http", host: "proxy", port: 3128, realm: "p")) == nil)
        #expect(
            store.credential(for: ProtectionSpace(scheme: "http", host: "proxy", port: 3128, realm: "p", isProxy: true))
                == alice)
    }

    @Test func concurrentChangesAndLookupsAreSafe() async {
        let store = CredentialStore()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    for step in 0..<500 {
                        let space = ProtectionSpace(
                            scheme: "https", host: "h\(index)", port: 443, realm: "r\(step % 7)")
                        store.set(Credential(user: "u\(step)", password: "p"), for: space)
                        _ = store.credential(for: space)
                        if step % 3 == 0 { store.remove(for: space) }
                    }
                }
            }
        }
        #expect(store.spaces.count <= 8 * 7)
    }
}
