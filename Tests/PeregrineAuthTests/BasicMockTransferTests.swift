import PeregrineAuth
import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Testing

/// Basic through the decorator on the in-memory transport: retry once, fail with the realm,
/// never over plain http unless allowed.
@Suite("Basic on the mock transport")
struct BasicMockTransferTests {
    static let aladdin = Credential(user: "Aladdin", password: "open sesame")
    static let header = "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
    static let challenge = #"Basic realm="WallyWorld", charset="UTF-8""#

    @Test func challengeIsAnsweredFromTheStore() async throws {
        let fixture = MockAuthFixture()
        fixture.store.set(
            Self.aladdin, for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443, realm: "WallyWorld"))
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(Self.header, challenges: [Self.challenge]), for: "/f")

        let (result, log) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        #expect(result.summary?.receivedBytes == 1024)
        #expect(fixture.authorizations(for: "/f") == [nil, Self.header])
        #expect(log.heads.map(\.status) == [200])
    }

    @Test func wrongPasswordFailsWithTheRealmAfterExactlyOneRetry() async throws {
        let fixture = MockAuthFixture()
        fixture.store.set(
            Credential(user: "Aladdin", password: "wrong"),
            for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(Self.header, challenges: [Self.challenge]), for: "/f")

        let (result, log) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        let error = try #require(result.error)
        #expect(error.failureReason.code == .authentication)
        #expect(error.failureReason.message.contains("WallyWorld"))
        #expect(error.message.contains("rejected"))
        #expect(fixture.server.requests(for: "/f").count == 2)
        // The caller sees the final 401 once, then the one completion.
        #expect(log.heads.map(\.status) == [401])
        #expect(log.completionCount == 1)
    }

    @Test func missingCredentialsFailWithoutARetry() async throws {
        let fixture = MockAuthFixture()
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(Self.header, challenges: [Self.challenge]), for: "/f")

        let (result, _) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        #expect(result.error?.failureReason.code == .authentication)
        #expect(result.error?.message.contains("\"WallyWorld\"") == true)
        #expect(result.error?.message.contains("none are stored") == true)
        #expect(fixture.server.requests(for: "/f").count == 1)
    }

    @Test func laterRequestsBelowTheDirectoryArePreemptive() async throws {
        let fixture = MockAuthFixture()
        fixture.store.set(Self.aladdin, for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        for path in ["/dir/a", "/dir/sub/b", "/other/c"] {
            fixture.server.setRoute(
                .file(MockAuthFixture.body).requiringAuthorization(Self.header, challenges: [Self.challenge]), for: path
            )
        }
        for path in ["/dir/a", "/dir/sub/b", "/other/c"] {
            let (result, _) = await fixture.transport.run(try fixture.request("https://mock.test" + path))
            #expect(result.summary != nil)
        }
        #expect(fixture.authorizations(for: "/dir/a") == [nil, Self.header])
        #expect(fixture.authorizations(for: "/dir/sub/b") == [Self.header])
        // Outside the challenged directory the client waits to be asked (RFC 7617 §2.2).
        #expect(fixture.authorizations(for: "/other/c") == [nil, Self.header])
    }

    @Test func plainHTTPChallengeIsRefusedWithoutSendingCredentials() async throws {
        let fixture = MockAuthFixture()
        fixture.store.set(Self.aladdin, for: ProtectionSpace(scheme: "http", host: "mock.test", port: 80))
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(Self.header, challenges: [Self.challenge]), for: "/f")

        let (result, _) = await fixture.transport.run(try fixture.request("http://mock.test/f"))

        #expect(result.error?.failureReason.code == .authentication)
        #expect(result.error?.message.contains("plain http") == true)
        #expect(fixture.authorizations(for: "/f") == [nil])
    }

    @Test func plainHTTPIsUsedForAHostTheUserAllowed() async throws {
        let fixture = MockAuthFixture(configuration: .init(plainHTTPHosts: ["MOCK.test"]))
        fixture.store.set(Self.aladdin, for: ProtectionSpace(scheme: "http", host: "mock.test", port: 80))
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(Self.header, challenges: [Self.challenge]), for: "/f")

        let (result, _) = await fixture.transport.run(try fixture.request("http://mock.test/f"))

        #expect(result.summary?.head.status == 200)
        #expect(fixture.authorizations(for: "/f") == [nil, Self.header])
    }

    @Test func restrictionToBasicAnswersBasicThoughDigestIsOffered() async throws {
        let fixture = MockAuthFixture(configuration: .init(allowedSchemes: [.basic]))
        fixture.store.set(Self.aladdin, for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(
                Self.header, challenges: [#"Digest realm="WallyWorld", nonce="n", qop="auth""#, Self.challenge]),
            for: "/f")

        let (result, _) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        #expect(result.summary != nil)
        #expect(fixture.authorizations(for: "/f") == [nil, Self.header])
    }

    @Test func restrictionToDigestRefusesABasicOnlyServer() async throws {
        let fixture = MockAuthFixture(configuration: .init(allowedSchemes: [.digest]))
        fixture.store.set(Self.aladdin, for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(Self.header, challenges: [Self.challenge]), for: "/f")

        let (result, _) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        #expect(result.error?.failureReason.code == .authentication)
        #expect(result.error?.message.contains("Basic is not allowed") == true)
        #expect(fixture.server.requests.count == 1)
    }

    @Test func unsupportedSchemesAreNamedInTheError() async throws {
        let fixture = MockAuthFixture()
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization("x", challenges: ["Negotiate", "NTLM"]), for: "/f")

        let (result, _) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        let message = try #require(result.error?.message)
        #expect(message.contains("Negotiate") && message.contains("NTLM"))
        #expect(result.error?.failureReason.code == .authentication)
    }

    @Test func hostileChallengeFailsWithATypedMessageNotACrash() async throws {
        let fixture = MockAuthFixture()
        fixture.store.set(Self.aladdin, for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        let hostile = "Digest " + (0..<10_000).map { "p\($0)=\"\u{1B}\"" }.joined(separator: ",")
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization("x", challenges: [hostile, #"Basic realm="x"#]),
            for: "/f")

        let (result, _) = await fixture.transport.run(try fixture.request("https://mock.test/f"))

        let message = try #require(result.error?.message)
        #expect(result.error?.failureReason.code == .authentication)
        #expect(message.count <= 501)
        #expect(!message.contains("\u{1B}"))
    }
}
