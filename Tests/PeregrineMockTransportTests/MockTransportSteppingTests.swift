import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Synchronization
import Testing

/// Manual mode: nothing happens until the caller advances the virtual clock.
@Suite("MockTransport manual stepping")
struct MockTransportSteppingTests {
    let server = MockServer()
    let body = MockBody.generated(seed: 21, count: 250_000)

    init() {
        server.setRoute(.file(body).delayed(by: .seconds(2)).throttled(toBytesPerSecond: 100_000), for: "/f")
    }

    var request: TransferRequest { try! TransferRequest(url: "http://mock.test/f") }

    @Test func nothingHappensUntilTheClockIsAdvanced() {
        let transport = MockTransport(server: server, mode: .manual)
        let log = TransferLog(transport)
        _ = transport.start(request, sink: DiscardingSink(), events: log.handler)
        #expect(log.events.isEmpty)
        #expect(server.requests.isEmpty)
        #expect(transport.now == .zero)
        #expect(transport.nextStepTime == .zero)
    }

    @Test func advanceDeliversExactlyTheEventsDueByThen() {
        let transport = MockTransport(server: server, mode: .manual)
        let sink = RecordingSink()
        let log = TransferLog(transport)
        _ = transport.start(request, sink: sink, events: log.handler)

        transport.advance(by: .milliseconds(1999))
        #expect(server.requests.count == 1)
        #expect(log.events.isEmpty)
        #expect(transport.now == MockInstant(offset: .milliseconds(1999)))

        transport.advance(by: .milliseconds(1))
        #expect(log.events.count == 1)
        #expect(log.head?.status == 200)
        #expect(sink.bytes.isEmpty)

        transport.advance(to: MockInstant(offset: .seconds(3)))
        #expect(log.progress.map(\.receivedBytes) == [65536])
        #expect(transport.now == MockInstant(offset: .seconds(3)))

        transport.advance(by: .seconds(10))
        #expect(log.summary?.receivedBytes == 250_000)
        #expect(transport.now == MockInstant(offset: .seconds(13)))
        #expect(
            log.all.map(\.time.offset.inSeconds) == [2, 2.65536, 3.31072, 3.96608, 4.5, 4.5])
    }

    @Test func runNextStepDeliversOneEventAtATime() {
        let transport = MockTransport(server: server, mode: .manual)
        let log = TransferLog(transport)
        _ = transport.start(request, sink: DiscardingSink(), events: log.handler)
        #expect(transport.runNextStep())  // sends the request
        #expect(log.events.isEmpty)
        #expect(transport.nextStepTime == MockInstant(offset: .seconds(2)))
        var counts: [Int] = []
        while transport.runNextStep() { counts.append(log.events.count) }
        #expect(counts == [1, 2, 3, 4, 5, 6])
        #expect(!transport.runNextStep())
    }

    @Test func runUntilIdleJumpsToEachStep() {
        let transport = MockTransport(server: server, mode: .manual)
        let log = TransferLog(transport)
        _ = transport.start(request, sink: DiscardingSink(), events: log.handler)
        transport.runUntilIdle()
        #expect(log.summary != nil)
        #expect(transport.now == MockInstant(offset: .seconds(4.5)))
        #expect(transport.activeTransfers.isEmpty)
    }

    @Test func concurrentTransfersInterleaveByTimeThenByStart() {
        server.setRoute(.file(.generated(seed: 1, count: 3 * 65536)).throttled(toBytesPerSecond: 65536), for: "/a")
        server.setRoute(.file(.generated(seed: 2, count: 3 * 65536)).throttled(toBytesPerSecond: 2 * 65536), for: "/b")
        let transport = MockTransport(server: server, mode: .manual)
        let trace = Locked<[String]>([])
        for name in ["a", "b"] {
            _ = transport.start(try! TransferRequest(url: "http://mock.test/" + name), sink: DiscardingSink()) {
                event in
                guard case .progress(let progress) = event else { return }
                let line = "\(transport.now.offset.inSeconds) \(name)\(progress.receivedBytes / 65536)"
                trace.withLock { $0.append(line) }
            }
        }
        transport.runUntilIdle()
        // b every 0.5 s, a every second; at 1 s, a's chunk was scheduled first.
        #expect(trace.withLock { $0 } == ["0.5 b1", "1.0 a1", "1.0 b2", "1.5 b3", "2.0 a2", "3.0 a3"])
    }

    @Test func steppingFromAnEventHandlerIsRefused() async {
        await #expect(processExitsWith: .failure) {
            let server = MockServer()
            server.setRoute(.file(.text("x")), for: "/f")
            let transport = MockTransport(server: server, mode: .manual)
            _ = transport.start(try! TransferRequest(url: "http://mock.test/f"), sink: DiscardingSink()) { _ in
                transport.runUntilIdle()
            }
            transport.runUntilIdle()
        }
    }
}
