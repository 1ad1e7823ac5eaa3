import PeregrineAuth
import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Synchronization
import Testing

/// The per-transfer and per-session challenge handlers (SDEDownloadManager's
/// `taskDidReceiveChallengeHandler` and `sessionDidReceiveChallengeHandler`).
@Suite("Challenge handlers")
struct ChallengeHandlerTests {
    static let header = "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
    static let right = Credential(user: "Aladdin", password: "open sesame")
    static let wrong = Credential(user: "Aladdin", password: "wrong")
    static let challenge = #"Basic realm="WallyWorld""#

    func protectedFixture(_ configuration: AuthenticatingTransport.Configuration = .init()) -> MockAuthFixture {
        let fixture = MockAuthFixture(configuration: configuration)
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(Self.header, challenges: [Self.challenge]), for: "/f")
        return fixture
    }

    /// Runs one transfer with a per-transfer handler.
    func run(
        _ fixture: MockAuthFixture, handler: (any ChallengeHandler)?
    ) async throws -> (Result<TransferSummary, TransportError>, EventLog) {
        let log = EventLog()
        _ = fixture.transport.start(
            try fixture.request("https://mock.test/f"), sink: MemorySink(), challengeHandler: handler,
            events: log.handler)
        return (await log.completion(), log)
    }

    @Test func transferHandlerSuppliesTheCredentialAndSeesTheChallenge() async throws {
        let fixture = protectedFixture()
        let seen = Locked<[ReceivedChallenge]>([])
        let (result, _) = try await run(
            fixture,
            handler: .closure { challenge in
                seen.withLock { $0.append(challenge) }
                return .useCredential(Self.right)
            })

        #expect(result.summary != nil)
        let challenge = try #require(seen.withLock { $0.first })
        #expect(
            challenge.protectionSpace
                == ProtectionSpace(scheme: "https", host: "mock.test", port: 443, realm: "WallyWorld"))
        #expect(challenge.scheme == .basic)
        #expect(challenge.previousFailureCount == 0)
        #expect(challenge.proposedCredential == nil)
        #expect(challenge.failureResponse.status == 401)
        #expect(challenge.url.string == "https://mock.test/f")
        #expect(!challenge.isProxy)
    }

    @Test func handlerIsAskedAgainWithTheFailureCountAndMayCorrectItself() async throws {
        let fixture = protectedFixture()
        let counts = Locked<[Int]>([])
        let (result, _) = try await run(
            fixture,
            handler: .closure { challenge in
                counts.withLock { $0.append(challenge.previousFailureCount) }
                return .useCredential(challenge.previousFailureCount == 0 ? Self.wrong : Self.right)
            })

        #expect(result.summary != nil, "\(String(describing: result.error))")
        #expect(counts.withLock { $0 } == [0, 1])
        #expect(fixture.server.requests(for: "/f").count == 3)
    }

    @Test func handlerRepeatingARejectedCredentialEndsTheTransfer() async throws {
        let fixture = protectedFixture()
        let (result, _) = try await run(fixture, handler: .closure { _ in .useCredential(Self.wrong) })

        #expect(result.error?.failureReason.code == .authentication)
        #expect(fixture.server.requests(for: "/f").count == 2)
    }

    @Test func handlerThatKeepsGuessingIsStoppedAtTheAttemptLimit() async throws {
        let fixture = protectedFixture(.init(maximumAttempts: 3))
        let guesses = Atomic<Int>(0)
        let (result, _) = try await run(
            fixture,
            handler: .closure { _ in
                .useCredential(
                    Credential(user: "Aladdin", password: "guess \(guesses.add(1, ordering: .relaxed).newValue)"))
            })

        #expect(result.error?.failureReason.code == .authentication)
        #expect(result.error?.message.contains("after 3 answered challenges") == true)
        #expect(fixture.server.requests(for: "/f").count == 4)
    }

    @Test func cancellingTheChallengeFailsTheTransfer() async throws {
        let fixture = protectedFixture()
        fixture.store.set(Self.right, for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        let (result, log) = try await run(fixture, handler: .closure { _ in .cancelAuthenticationChallenge })

        #expect(result.error?.failureReason.code == .authentication)
        #expect(result.error?.message.contains("cancelled the challenge for realm \"WallyWorld\"") == true)
        #expect(fixture.server.requests(for: "/f").count == 1)
        #expect(log.completionCount == 1)
    }

    @Test func sessionHandlerDecidesWhenTheTransferHandlerDefers() async throws {
        let asked = Locked<[String]>([])
        let fixture = protectedFixture(
            .init(
                challengeHandler: .closure { _ in
                    asked.withLock { $0.append("session") }
                    return .useCredential(Self.right)
                }))
        let (result, _) = try await run(
            fixture,
            handler: .closure { _ in
                asked.withLock { $0.append("transfer") }
                return .performDefaultHandling
            })

        #expect(result.summary != nil)
        #expect(asked.withLock { $0 } == ["transfer", "session"])
    }

    @Test func defaultHandlingAfterBothHandlersDeferUsesTheStore() async throws {
        let fixture = protectedFixture(.init(challengeHandler: .closure { _ in .performDefaultHandling }))
        fixture.store.set(Self.right, for: ProtectionSpace(scheme: "https", host: "mock.test", port: 443))
        let (result, _) = try await run(
            fixture,
            handler: .closure { challenge in
                #expect(challenge.proposedCredential == Self.right)
                return .performDefaultHandling
            })

        #expect(result.summary != nil)
    }

    @Test func rejectingTheDigestSpaceFallsBackToBasic() async throws {
        let fixture = MockAuthFixture()
        fixture.server.setRoute(
            .file(MockAuthFixture.body).requiringAuthorization(
                Self.header, challenges: [#"Digest realm="D", nonce="n", qop="auth""#, Self.challenge]),
            for: "/f")
        let schemes = Locked<[AuthenticationScheme]>([])
        let (result, _) = try await run(
            fixture,
            handler: .closure { challenge in
                schemes.withLock { $0.append(challenge.scheme) }
                return challenge.scheme == .digest ? .rejectProtectionSpace : .useCredential(Self.right)
            })

        #expect(result.summary != nil)
        #expect(schemes.withLock { $0 } == [.digest, .basic])
        #expect(fixture.authorizations(for: "/f") == [nil, Self.header])
    }
}
