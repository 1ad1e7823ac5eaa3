import PeregrineAuth
import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Testing

/// `407` from a configured proxy, answered with `Proxy-Authorization`.
@Suite("Proxy authentication on the mock transport")
struct ProxyAuthenticationTests {
    static let proxy = Origin(scheme: "http", host: "proxy.test", port: 3128)
    static let proxySpace = ProtectionSpace(origin: proxy, isProxy: true)

    static func proxyChallenge(_ value: String) -> MockRoute {
        MockRoute.status(407).adding(header: "Proxy-Authenticate", value: value)
    }

    @Test func basicProxyChallengeIsAnsweredWithProxyAuthorization() async throws {
        let fixture = MockAuthFixture(configuration: .init(plainHTTPHosts: ["proxy.test"], proxy: Self.proxy))
        fixture.store.set(Credential(user: "Aladdin", password: "open sesame"), for: Self.proxySpace)
        fixture.server.setRoutes(
            [Self.proxyChallenge(#"Basic realm="proxy""#), .file(MockAuthFixture.body)], for: "/f")

        let (result, log) = await fixture.transport.run(try fixture.request("https://files.test/f"))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        let sent = fixture.server.requests(for: "/f").map { $0.headers["Proxy-Authorization"] }
        #expect(sent == [nil, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="])
        // Proxy credentials are not origin credentials.
        #expect(fixture.server.requests(for: "/f").allSatisfy { $0.headers["Authorization"] == nil })
        #expect(log.heads.map(\.status) == [200])
    }

    @Test func digestProxyChallengeUsesTheAbsoluteURIAndStaysPreemptive() async throws {
        let challenge = #"Digest realm="proxy", nonce="P1", algorithm=SHA-256, qop="auth""#
        let credential = Credential(user: "p", password: "q")
        let fixture = MockAuthFixture(
            configuration: .init(
                plainHTTPHosts: ["proxy.test"], proxy: Self.proxy, clientNonces: .sequence(["c1", "c2"])))
        fixture.store.set(credential, for: Self.proxySpace)
        fixture.server.setRoutes([Self.proxyChallenge(challenge), .file(MockAuthFixture.body)], for: "/f")
        fixture.server.setRoute(.file(MockAuthFixture.body), for: "/g")

        let (first, _) = await fixture.transport.run(try fixture.request("https://files.test/f"))
        let (second, _) = await fixture.transport.run(try fixture.request("https://files.test/g"))

        #expect(first.summary != nil && second.summary != nil)
        let expectedFirst = try MockAuthFixture.digestHeader(
            challenge, credential: credential, uri: "https://files.test/f", nonceCount: 1, clientNonce: "c1")
        let expectedSecond = try MockAuthFixture.digestHeader(
            challenge, credential: credential, uri: "https://files.test/g", nonceCount: 2, clientNonce: "c2")
        #expect(fixture.server.requests(for: "/f").map { $0.headers["Proxy-Authorization"] } == [nil, expectedFirst])
        #expect(fixture.server.requests(for: "/g").map { $0.headers["Proxy-Authorization"] } == [expectedSecond])
    }

    @Test func proxyChallengeWithoutAConfiguredProxyFails() async throws {
        let fixture = MockAuthFixture()
        fixture.store.set(Credential(user: "a", password: "b"), for: Self.proxySpace)
        fixture.server.setRoute(Self.proxyChallenge(#"Basic realm="proxy""#), for: "/f")

        let (result, log) = await fixture.transport.run(try fixture.request("https://files.test/f"))

        #expect(result.error?.failureReason.code == .authentication)
        #expect(result.error?.httpStatus == 407)
        #expect(result.error?.message.contains("no proxy is configured") == true)
        #expect(fixture.server.requests.count == 1)
        #expect(log.heads.map(\.status) == [407])
    }

    @Test func wrongProxyPasswordFailsAfterOneRetry() async throws {
        let fixture = MockAuthFixture(configuration: .init(plainHTTPHosts: ["proxy.test"], proxy: Self.proxy))
        fixture.store.set(Credential(user: "a", password: "wrong"), for: Self.proxySpace)
        fixture.server.setRoute(Self.proxyChallenge(#"Basic realm="proxy""#), for: "/f")

        let (result, _) = await fixture.transport.run(try fixture.request("https://files.test/f"))

        #expect(result.error?.failureReason.code == .authentication)
        #expect(result.error?.message.contains("the proxy rejected the credentials for realm \"proxy\"") == true)
        #expect(fixture.server.requests.count == 2)
    }
}
