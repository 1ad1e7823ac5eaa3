import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Synchronization
import Testing

/// The same script gives the same events at the same virtual times, every time.
@Suite("MockTransport determinism")
struct MockTransportDeterminismTests {
    /// Runs a script of five transfers with latency, throttling, faults, a pause from the
    /// handler, a cancel from the handler and a resume by the script; returns its trace.
    static func runScript() -> [String] {
        let server = MockServer()
        server.setRoute(
            .file(.generated(seed: 1, count: 500_000), entityTag: .fixed("\"1\"")).delayed(by: .milliseconds(30))
                .throttled(toBytesPerSecond: 300_000), for: "/one")
        server.setRoute(.redirect(to: "/two/final"), for: "/two")
        server.setRoute(
            .file(.generated(seed: 2, count: 200_000)).delayed(by: .milliseconds(70)).throttled(
                toBytesPerSecond: 1 << 20),
            for: "/two/final")
        server.setRoute(
            .file(.generated(seed: 3, count: 300_000)).faulting(.dropAfter(bytes: 150_000))
                .throttled(toBytesPerSecond: 500_000), for: "/three")
        server.setRoute(.file(.generated(seed: 4, count: 1 << 20)).throttled(toBytesPerSecond: 400_000), for: "/four")
        server.setRoute(.status(503, retryAfter: "5").delayed(by: .milliseconds(10)), for: "/five")

        let transport = MockTransport(server: server, mode: .manual, chunkSize: 32 << 10)
        let log = TraceLog()
        let actions: @Sendable (TransferID, TransferEvent) -> Void = { id, event in
            guard case .progress(let progress) = event else { return }
            if id.rawValue == 1, progress.receivedBytes == 4 * 32768 { transport.pause(id) }
            if id.rawValue == 4, progress.receivedBytes >= 300_000 { transport.cancel(id) }
        }
        for path in ["/one", "/two", "/three", "/four", "/five"] {
            let request = try! TransferRequest(url: "http://mock.test" + path)
            let id = TransferIDCell()
            let started = transport.start(request, sink: RecordingSink()) { event in
                log.append("\(transport.now) \(id.value) \(describe(event))")
                actions(id.value, event)
            }
            id.value = started
        }
        transport.advance(by: .seconds(1))
        log.append("resume at \(transport.now)")
        transport.resume(TransferID(rawValue: 1))
        transport.runUntilIdle()
        return log.lines
    }

    @Test func sameScriptTwiceGivesIdenticalTracesWithVirtualTimes() {
        let first = Self.runScript()
        let second = Self.runScript()
        #expect(first == second)
        #expect(first.count > 40)
        #expect(first.contains("t+0.03 seconds #1 head 200"))
        #expect(first.contains { $0.hasSuffix("#4 failed cancelled") })
        #expect(first.contains { $0.hasSuffix("#3 failed connection closed early") })
        #expect(first.contains { $0.hasSuffix("#1 completed 500000") })
    }

    @Test func automaticModeGivesTheSameSingleTransferTraceAsManual() async {
        func trace(_ mode: MockTransport.Mode) async -> [String] {
            let server = MockServer()
            server.setRoute(
                .file(.generated(seed: 8, count: 300_000)).delayed(by: .milliseconds(50))
                    .throttled(toBytesPerSecond: 123_456), for: "/f")
            let transport = MockTransport(server: server, mode: mode)
            let (events, continuation) = AsyncStream<String>.makeStream()
            _ = transport.start(try! TransferRequest(url: "http://mock.test/f"), sink: DiscardingSink()) { event in
                continuation.yield("\(transport.now) \(describe(event))")
                if case .completed = event { continuation.finish() }
            }
            if mode == .manual { transport.runUntilIdle() }
            var lines: [String] = []
            for await line in events { lines.append(line) }
            return lines
        }
        let manual = await trace(.manual)
        let automatic = await trace(.automatic)
        #expect(manual == automatic)
        #expect(manual.count == 7)
    }
}

private func describe(_ event: TransferEvent) -> String {
    switch event {
    case .redirected(let redirect): "redirected \(redirect.status) \(redirect.to)"
    case .head(let head): "head \(head.status)"
    case .progress(let progress): "progress \(progress.receivedBytes)"
    case .completed(.success(let summary)): "completed \(summary.receivedBytes)"
    case .completed(.failure(let error)): "failed \(error.code)"
    }
}

/// Lines appended from event handlers.
private final class TraceLog: Sendable {
    private let stored = Locked<[String]>([])
    func append(_ line: String) { stored.withLock { $0.append(line) } }
    var lines: [String] { stored.withLock { $0 } }
}

/// A transfer's identifier, set once `start` returned (manual mode delivers nothing before).
private final class TransferIDCell: Sendable {
    private let stored = Locked<TransferID?>(nil)
    var value: TransferID {
        get { stored.withLock { $0 }! }
        set { stored.withLock { $0 = newValue } }
    }
}
