import PeregrineAuth
import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Testing

/// Credentials stay with their origin across redirects.
@Suite("Credentials and redirects")
struct RedirectCredentialTests {
    static let header = "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
    static let aladdin = Credential(user: "Aladdin", password: "open sesame")

    func fixture() -> MockAuthFixture {
        let fixture = MockAuthFixture()
        fixture.store.set(Self.aladdin, for: ProtectionSpace(scheme: "https", host: "a.test", port: 443))
        // Even credentials stored for the other origin are not sent after a redirect there.
        fixture.store.set(Self.aladdin, for: ProtectionSpace(scheme: "https", host: "b.test", port: 443))
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(Self.header, challenges: [#"Basic realm="A""#]),
            for: "/private/f", host: "a.test")
        return fixture
    }

    @Test func preemptiveCredentialsAreDroppedOnARedirectToAnotherOrigin() async throws {
        let fixture = fixture()
        fixture.server.setRoute(.redirect(to: "https://b.test/public/f"), for: "/private/go", host: "a.test")
        fixture.server.setRoute(.file(MockAuthFixture.body), for: "/public/f", host: "b.test")
        _ = await fixture.transport.run(try fixture.request("https://a.test/private/f"))

        let (result, log) = await fixture.transport.run(try fixture.request("https://a.test/private/go"))

        #expect(result.summary?.redirectCount == 1)
        #expect(fixture.server.requests(for: "/private/go").map { $0.headers["Authorization"] } == [Self.header])
        #expect(fixture.server.requests(for: "/public/f").map { $0.headers["Authorization"] } == [nil])
        #expect(log.heads.map(\.status) == [200])
    }

    @Test func challengeFromAnotherOriginAfterARedirectIsNotAnswered() async throws {
        let fixture = fixture()
        fixture.server.setRoute(.redirect(to: "https://b.test/private/f"), for: "/go", host: "a.test")
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(Self.header, challenges: [#"Basic realm="B""#]),
            for: "/private/f", host: "b.test")

        let (result, log) = await fixture.transport.run(try fixture.request("https://a.test/go"))

        #expect(result.error?.failureReason.code == .authentication)
        #expect(result.error?.message.contains("another origin") == true)
        let toB = fixture.server.requests.filter { $0.host == "b.test" }
        #expect(toB.count == 1)
        #expect(toB.allSatisfy { $0.headers["Authorization"] == nil })
        #expect(log.heads.map(\.status) == [401])
        #expect(log.completionCount == 1)
    }

    @Test func challengeAfterASameOriginRedirectIsAnsweredAtTheTarget() async throws {
        let challenge = #"Digest realm="A", nonce="N", qop="auth""#
        let fixture = MockAuthFixture(configuration: .init(clientNonces: .sequence(["c1"])))
        fixture.store.set(Self.aladdin, for: ProtectionSpace(scheme: "https", host: "a.test", port: 443))
        let expected = try MockAuthFixture.digestHeader(
            challenge, credential: Self.aladdin, uri: "/dir/f", nonceCount: 1, clientNonce: "c1")
        fixture.server.setRoute(.redirect(to: "/dir/f"), for: "/go")
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(expected, challenges: [challenge]), for: "/dir/f")

        let (result, log) = await fixture.transport.run(try fixture.request("https://a.test/go"))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(result.summary?.redirectCount == 1)
        #expect(fixture.authorizations(for: "/dir/f") == [nil, expected])
        #expect(fixture.server.requests(for: "/go").count == 1)
        let redirects = log.events.filter { if case .redirected = $0 { true } else { false } }
        #expect(redirects.count == 1)
    }
}
