import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import PeregrineTransport
import Testing

/// Retries that wait, on the mock transport's virtual clock: backoff, `Retry-After`, what is
/// never retried, and a pause that cancels the wait.
@Suite("DownloadEngine retries")
struct EngineRetryTests {
    /// A policy without jitter, so that the waits are exact.
    static func policy(maxRetries: Int = 5, maxRetryAfter: Duration = .seconds(3600)) throws -> BackoffRetryPolicy {
        try BackoffRetryPolicy(
            maxRetries: maxRetries, initialDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(60), jitter: 0,
            maxRetryAfter: maxRetryAfter, date: { EngineHarness.date })
    }

    static func harness(_ policy: BackoffRetryPolicy, chunkSize: Int = 10_000) throws -> EngineHarness {
        try EngineHarness(chunkSize: chunkSize) { $0.retryPolicy = policy }
    }

    @Test func aDroppedConnectionIsRetriedAfterTheBackoffFromTheSyncedOffset() async throws {
        let h = try Self.harness(Self.policy())
        let body = MockBody.generated(seed: 3, count: 300_000)
        h.server.setRoutes(
            [
                MockRoute.file(body, entityTag: .fixed("\"r\"")).faulting(.dropAfter(bytes: 120_000)),
                .file(body, entityTag: .fixed("\"r\"")),
            ], for: "/drop.bin")
        let url = h.url("/drop.bin")
        h.engine.download([url])
        // Everything up to the drop; the retry waits one second of virtual time.
        h.advance(.milliseconds(500))
        #expect(h.engine.state(ofTask: url) == .downloading)
        #expect(h.engine.task(url)?.retryAt != nil)
        #expect(h.ranges("/drop.bin").count == 1)
        h.advance(.milliseconds(400))
        #expect(h.ranges("/drop.bin").count == 1, "the retry came before its wait")
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "drop.bin") == body.allBytes)
        let ranges = h.ranges("/drop.bin")
        #expect(ranges.count == 2)
        #expect(ranges.last?.hasPrefix("bytes=") == true && ranges.last?.hasSuffix("\"r\"") == true)
        #expect(h.engine.task(url)?.retryAt == nil)
        let events = await h.recorder.wait { $0.contains { if case .finished = $0 { true } else { false } } }
        let retrying = events.compactMap { event -> Duration? in
            if case .retrying(url, let after, let reason) = event, reason.code == .network { return after }
            return nil
        }
        #expect(retrying == [.seconds(1)])
    }

    @Test func waitsGrowAndTheTaskFailsWhenTheRetriesRunOut() async throws {
        let h = try Self.harness(Self.policy(maxRetries: 3))
        h.server.setRoute(.status(500), for: "/broken")
        let url = h.url("/broken")
        h.engine.download([url])
        h.runUntilIdle()
        guard case .failed(let reason) = h.engine.state(ofTask: url) else {
            Issue.record("expected failed, got \(h.engine.state(ofTask: url))")
            return
        }
        #expect(reason.httpStatus == 500)
        #expect(h.server.requests(for: "/broken").count == 4)
        let events = await h.recorder.wait { $0.contains { if case .failed = $0 { true } else { false } } }
        let waits = events.compactMap { event -> Duration? in
            if case .retrying(_, let after, _) = event { return after }
            return nil
        }
        #expect(waits == [.seconds(1), .seconds(2), .seconds(4)])
        #expect(h.transport.now.offset == .seconds(7))
    }

    @Test(arguments: ["7", "Tue, 14 Nov 2023 22:13:27 GMT"])
    func retryAfterIsHonouredOn503(_ value: String) throws {
        // EngineHarness.date is 2023-11-14 22:13:20 UTC: the date form asks for 7 s too.
        let h = try Self.harness(Self.policy())
        let body = h.serve("/busy.bin", count: 5_000)
        h.server.setRoutes(
            [.status(503, retryAfter: value), .file(body, entityTag: .fixed("\"v1\""))], for: "/busy.bin")
        let url = h.url("/busy.bin")
        h.engine.download([url])
        h.advance(.milliseconds(6_900))
        #expect(h.server.requests(for: "/busy.bin").count == 1)
        h.advance(.milliseconds(200))
        #expect(h.server.requests(for: "/busy.bin").count == 2)
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "busy.bin") == body.allBytes)
    }

    @Test func aRetryAfterLongerThanTheLimitFailsAtOnce() throws {
        let h = try Self.harness(Self.policy(maxRetryAfter: .seconds(60)))
        h.server.setRoute(.status(503, retryAfter: "86400"), for: "/later")
        let url = h.url("/later")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url).isFailed)
        #expect(h.server.requests(for: "/later").count == 1)
    }

    @Test(arguments: [400, 401, 403, 404, 410])
    func otherClientErrorsAreNeverRetried(_ status: Int) throws {
        let h = try Self.harness(Self.policy())
        h.server.setRoute(.status(status), for: "/no")
        let url = h.url("/no")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url).isFailed)
        #expect(h.server.requests(for: "/no").count == 1)
    }

    @Test(arguments: [408, 429, 502, 504])
    func timeoutsTooManyRequestsAndServerErrorsAreRetried(_ status: Int) throws {
        let h = try Self.harness(Self.policy())
        let body = MockBody.generated(seed: 5, count: 2_000)
        h.server.setRoutes([.status(status), .file(body, entityTag: .fixed("\"v\""))], for: "/flaky")
        let url = h.url("/flaky")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.server.requests(for: "/flaky").count == 2)
    }

    @Test func pausingWhileWaitingCancelsTheRetryAndResumingStartsAtOnce() throws {
        let h = try Self.harness(Self.policy())
        let body = MockBody.generated(seed: 9, count: 1_000)
        h.server.setRoutes([.status(503), .file(body, entityTag: .fixed("\"p\""))], for: "/p")
        let url = h.url("/p")
        h.engine.download([url])
        h.advance(.milliseconds(100))
        #expect(h.engine.task(url)?.retryAt == .seconds(1))
        h.engine.stopTasks([url])
        #expect(h.engine.task(url)?.retryAt == nil)
        h.advance(.seconds(5))
        #expect(h.server.requests(for: "/p").count == 1, "a stopped task's retry must not fire")
        h.engine.resumeTasks([url])
        h.advance(.milliseconds(100))
        #expect(h.server.requests(for: "/p").count == 2)
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
    }

    @Test func deletingWhileWaitingLeavesNoTimerBehind() throws {
        let h = try Self.harness(Self.policy())
        h.server.setRoute(.status(503), for: "/gone")
        let url = h.url("/gone")
        h.engine.download([url])
        h.advance(.milliseconds(100))
        h.engine.deleteTasks([url])
        h.runUntilIdle()
        #expect(h.engine.task(url) == nil)
        #expect(h.server.requests(for: "/gone").count == 1)
    }
}

/// The policy's own rules, without an engine.
@Suite struct BackoffRetryPolicyTests {
    @Test func delaysDoubleUpToTheCap() throws {
        let policy = try BackoffRetryPolicy(
            initialDelay: .milliseconds(500), multiplier: 2, maxDelay: .seconds(5), jitter: 0)
        #expect(
            (0..<6).map(policy.delay(beforeRetry:)) == [0.5, 1, 2, 4, 5, 5].map { .milliseconds(Int64($0 * 1000)) })
    }

    @Test func jitterTakesAtMostItsShareOffTheWait() throws {
        let low = try BackoffRetryPolicy(jitter: 0.5, random: { 0.999_999 })
        let high = try BackoffRetryPolicy(jitter: 0.5, random: { 0 })
        #expect(low.delay(beforeRetry: 2) > .milliseconds(1999))
        #expect(low.delay(beforeRetry: 2) < .milliseconds(2001))
        #expect(high.delay(beforeRetry: 2) == .seconds(4))
    }

    @Test(arguments: [
        (FailureReason(.network, message: "reset"), true),
        (FailureReason(.timeout, message: "t"), true),
        (FailureReason(.tooSlow, message: "s"), true),
        (FailureReason(.httpStatus, httpStatus: 503, message: "x"), true),
        (FailureReason(.httpStatus, httpStatus: 408, message: "x"), true),
        (FailureReason(.httpStatus, httpStatus: 429, message: "x"), true),
        (FailureReason(.httpStatus, httpStatus: 404, message: "x"), false),
        (FailureReason(.authentication, httpStatus: 401, message: "x"), false),
        (FailureReason(.dns, message: "x"), false),
        (FailureReason(.tls, message: "x"), false),
        (FailureReason(.diskFull, message: "x"), false),
        (FailureReason(.protocolViolation, message: "x"), true),
        (FailureReason(.verification, message: "x"), false),
        (FailureReason(.redirectRefused, message: "x"), false),
    ])
    func transientFailures(_ reason: FailureReason, _ transient: Bool) {
        #expect(BackoffRetryPolicy.isTransient(reason) == transient)
    }

    @Test func retryAfterReadsSecondsAndTheThreeDateForms() {
        let now = Date(timeIntervalSince1970: 784_111_700)  // Sun, 06 Nov 1994 08:48:20 GMT
        #expect(BackoffRetryPolicy.retryAfter("120", now: now) == .seconds(120))
        #expect(BackoffRetryPolicy.retryAfter(" 0 ", now: now) == .zero)
        #expect(BackoffRetryPolicy.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .seconds(77))
        #expect(BackoffRetryPolicy.retryAfter("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == .seconds(77))
        #expect(BackoffRetryPolicy.retryAfter("Sun Nov  6 08:49:37 1994", now: now) == .seconds(77))
        #expect(BackoffRetryPolicy.retryAfter("Sat, 05 Nov 1994 08:49:37 GMT", now: now) == .zero)
        for garbage in ["", "-5", "1.5", "soon", "Sun, 31 Feb 1994 25:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 PST"] {
            #expect(BackoffRetryPolicy.retryAfter(garbage, now: now) == nil, "\(garbage)")
        }
    }

    /// The form `If-Modified-Since` is sent in (`peregrine get -N`): IMF-fixdate, read back to
    /// the same second, across leap days, centuries and the epoch.
    @Test func httpDatesAreWrittenAsIMFFixdate() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 951_782_400.9)) == "Tue, 29 Feb 2000 00:00:00 GMT")
        // A fixed sequence of instants up to the 23rd century; a failure names the one it met.
        var seed: UInt64 = 0x5EED_DA7E
        for _ in 0..<2_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let seconds = Double((seed >> 30) % 7_000_000_000)
            let date = Date(timeIntervalSince1970: seconds)
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date, "\(seconds): \(HTTPDate.format(date))")
        }
    }

    @Test func settingsOutOfRangeAreRefused() {
        #expect(throws: EngineError.self) { try BackoffRetryPolicy(maxRetries: -1) }
        #expect(throws: EngineError.self) { try BackoffRetryPolicy(initialDelay: .zero) }
        #expect(throws: EngineError.self) { try BackoffRetryPolicy(multiplier: 0.5) }
        #expect(throws: EngineError.self) { try BackoffRetryPolicy(jitter: 1.5) }
        #expect(throws: EngineError.self) { try BackoffRetryPolicy(initialDelay: .seconds(10), maxDelay: .seconds(1)) }
    }
}

extension DownloadState {
    /// Whether the state is `failed`, whatever the reason.
    fileprivate var isFailed: Bool {
        if case .failed = self { return true }
        return false
    }
}
