import PeregrineAuth
import PeregrineCore
import PeregrineTransport
import Synchronization
import Testing

/// Pause, resume and cancel reach whichever attempt runs, and the caller sees one transfer,
/// checked step by step on a scripted transport.
@Suite("Control of an authenticated transfer")
struct TransferControlTests {
    static let url = "https://scripted.test/f"
    static let header = "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="

    func make(_ configuration: AuthenticatingTransport.Configuration = .init()) -> (
        ScriptedTransport, AuthenticatingTransport
    ) {
        let scripted = ScriptedTransport()
        let store = CredentialStore()
        store.set(
            Credential(user: "Aladdin", password: "open sesame"),
            for: ProtectionSpace(scheme: "https", host: "scripted.test", port: 443))
        return (scripted, AuthenticatingTransport(wrapping: scripted, credentials: store, configuration: configuration))
    }

    @Test func pauseBeforeTheChallengeCarriesOverToTheRetry() throws {
        let (scripted, transport) = make()
        let log = EventLog()
        let id = transport.start(try TransferRequest(url: Self.url), sink: MemorySink(), events: log.handler)
        let first = scripted.latest

        transport.pause(id)
        scripted.challenge(first, url: Self.url)
        let second = scripted.latest
        transport.resume(id)
        scripted.succeed(second, url: Self.url)

        #expect(
            scripted.calls == [
                .start(first, url: Self.url, authorization: nil), .pause(first),
                .start(second, url: Self.url, authorization: Self.header), .pause(second), .resume(second),
            ])
        #expect(log.heads.map(\.status) == [200])
        #expect(log.completionCount == 1)
    }

    @Test func cancelReachesTheCurrentAttemptAndCompletesOnce() throws {
        let (scripted, transport) = make()
        let log = EventLog()
        let id = transport.start(try TransferRequest(url: Self.url), sink: MemorySink(), events: log.handler)
        scripted.challenge(scripted.latest, url: Self.url)
        let second = scripted.latest

        transport.cancel(id)
        transport.cancel(id)
        scripted.send(.completed(.failure(TransportError(.cancelled, "cancelled"))), to: second)

        #expect(scripted.calls.last == .cancel(second))
        #expect(scripted.calls.filter { if case .cancel = $0 { true } else { false } }.count == 1)
        #expect(log.completionCount == 1)
        #expect(log.heads.isEmpty)
        #expect(transport.activeTransfers.isEmpty)
        // Calls naming a finished transfer do nothing.
        transport.pause(id)
        transport.resume(id)
        #expect(scripted.calls.last == .cancel(second))
    }

    @Test func cancelFromInsideTheEventHandlerReachesTheAttemptAtOnce() throws {
        let (scripted, transport) = make()
        let box = Locked<TransferID?>(nil)
        let log = EventLog()
        let handler = log.handler
        let id = transport.start(try TransferRequest(url: Self.url), sink: MemorySink()) { event in
            handler(event)
            if case .progress = event, let id = box.withLock({ $0 }) { transport.cancel(id) }
        }
        box.withLock { $0 = id }
        let first = scripted.latest
        scripted.send(.head(ResponseHead(status: 200, headers: [:], effectiveURL: Self.url)), to: first)
        scripted.send(.progress(TransferProgress(receivedBytes: 10, expectedBytes: 100)), to: first)

        #expect(scripted.calls.last == .cancel(first))
    }

    @Test func cancelWhileAHandlerDecidesCompletesAtOnceAndStartsNothing() async throws {
        let (asked, askedContinuation) = AsyncStream<Void>.makeStream()
        let release = Locked<CheckedContinuation<ChallengeDisposition, Never>?>(nil)
        let (scripted, transport) = make(
            .init(
                challengeHandler: .closure { _ in
                    await withCheckedContinuation { continuation in
                        release.withLock { $0 = continuation }
                        askedContinuation.yield()
                    }
                }))
        let log = EventLog()
        let id = transport.start(try TransferRequest(url: Self.url), sink: MemorySink(), events: log.handler)
        scripted.challenge(scripted.latest, url: Self.url)
        for await _ in asked { break }

        transport.cancel(id)
        let result = await log.completion()
        release.withLock { $0 }?.resume(returning: .useCredential(Credential(user: "a", password: "b")))
        // Let the handler's task run to its end, then check nothing more happened.
        await Task.yield()

        #expect(result.error?.code == .cancelled)
        #expect(log.completionCount == 1)
        #expect(scripted.calls.filter { if case .start = $0 { true } else { false } }.count == 1)
    }

    @Test func redirectsOfTheChallengedAttemptAreForwardedAndCounted() throws {
        let (scripted, transport) = make()
        let log = EventLog()
        _ = transport.start(
            try TransferRequest(url: "https://scripted.test/go"), sink: MemorySink(), events: log.handler)
        let first = scripted.latest
        scripted.send(.redirected(Redirect(status: 302, from: "https://scripted.test/go", to: Self.url)), to: first)
        scripted.challenge(first, url: Self.url)
        let second = scripted.latest
        scripted.succeed(second, url: Self.url)

        // The retry asks the URL that challenged, with the rest of the redirect budget.
        #expect(scripted.request(second)?.url.string == Self.url)
        #expect(scripted.request(second)?.redirects.maxHops == 9)
        #expect(log.events.count == 3)
        if case .completed(.success(let summary)) = log.events.last {
            #expect(summary.redirectCount == 1)
        } else {
            Issue.record("no success: \(log.events)")
        }
    }
}
