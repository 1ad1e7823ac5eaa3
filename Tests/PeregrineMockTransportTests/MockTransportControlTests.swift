import Dispatch
import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Synchronization
import Testing

/// Pause, resume and cancel: from the handler, from another thread, in both modes.
@Suite("MockTransport pause, resume and cancel")
struct MockTransportControlTests {
    let server = MockServer()
    let body = MockBody.generated(seed: 11, count: 1 << 20)  // 16 chunks of 64 KiB

    init() {
        server.setRoute(.file(body).throttled(toBytesPerSecond: 1 << 20), for: "/f")
    }

    var request: TransferRequest { try! TransferRequest(url: "http://mock.test/f") }

    @Test func cancelFromTheHandlerAt40PercentWritesNothingMore() async {
        let transport = MockTransport(server: server)
        let sink = RecordingSink()
        let id = Locked<TransferID?>(nil)
        let bytesAtCancel = Locked<Int64?>(nil)
        let (events, continuation) = AsyncStream<TransferEvent>.makeStream()
        let started = transport.start(request, sink: sink) { event in
            continuation.yield(event)
            if case .progress(let progress) = event, progress.receivedBytes >= body.count * 4 / 10,
                bytesAtCancel.withLock({ $0 == nil })
            {
                bytesAtCancel.withLock { $0 = progress.receivedBytes }
                while id.withLock({ $0 }) == nil {}
                transport.cancel(id.withLock { $0 }!)
            }
            if case .completed = event { continuation.finish() }
        }
        id.withLock { $0 = started }
        var collected: [TransferEvent] = []
        for await event in events { collected.append(event) }

        let cancelledAt = bytesAtCancel.withLock { $0 }
        #expect(cancelledAt == Int64(7 * 65536))
        #expect(Int64(sink.bytes.count) == cancelledAt)
        #expect(sink.bytes == body.bytes(in: 0..<7 * 65536))
        guard case .completed(.failure(let error)) = collected.last else {
            Issue.record("no failure at the end: \(String(describing: collected.last))")
            return
        }
        #expect(error.code == .cancelled)
        #expect(collected.count { if case .completed = $0 { true } else { false } } == 1)
        #expect(sink.flushCount == 0)
    }

    @Test func pausedTransferHoldsThroughAnyAmountOfTimeAndResumesWhereItWas() {
        let transport = MockTransport(server: server, mode: .manual)
        let sink = RecordingSink()
        let log = TransferLog(transport) { event, transport in
            if case .progress(let progress) = event, progress.receivedBytes == 3 * 65536 {
                transport.pause(TransferID(rawValue: 1))
            }
        }
        let id = transport.start(request, sink: sink, events: log.handler)
        #expect(id == TransferID(rawValue: 1))
        transport.runUntilIdle()
        #expect(sink.bytes.count == 3 * 65536)
        #expect(transport.nextStepTime == nil)
        transport.advance(by: .seconds(3600))
        #expect(sink.bytes.count == 3 * 65536)
        #expect(log.result == nil)

        transport.resume(id)
        transport.runUntilIdle()
        #expect(sink.bytes == body.allBytes)
        #expect(log.summary?.receivedBytes == body.count)
        #expect(sink.offsets == (0..<16).map { Int64($0) * 65536 })
        // The chunk already in flight when paused lands at once on resume; the rest keep pace.
        let resumedAt = MockInstant(offset: .seconds(3600) + .seconds(1) * 3 * 65536 / (1 << 20))
        #expect(
            log.all.first {
                $0.event == .progress(TransferProgress(receivedBytes: 4 * 65536, expectedBytes: body.count))
            }?.time == resumedAt)
    }

    @Test func pauseBeforeTheHeadHoldsTheHead() {
        let transport = MockTransport(server: server, mode: .manual)
        let log = TransferLog(transport)
        let id = transport.start(request, sink: RecordingSink(), events: log.handler)
        transport.pause(id)
        transport.runUntilIdle()
        #expect(log.events.isEmpty)
        #expect(server.requests.isEmpty)
        transport.resume(id)
        transport.runUntilIdle()
        #expect(log.summary?.receivedBytes == body.count)
    }

    @Test func pauseAndResumeFromTheHandlerCompleteWithTheRightBytes() {
        let transport = MockTransport(server: server, mode: .manual)
        let sink = RecordingSink()
        let log = TransferLog(transport) { event, transport in
            if case .progress(let progress) = event, progress.receivedBytes == 5 * 65536 {
                transport.pause(TransferID(rawValue: 1))
                transport.resume(TransferID(rawValue: 1))
            }
        }
        _ = transport.start(request, sink: sink, events: log.handler)
        transport.runUntilIdle()
        #expect(sink.bytes == body.allBytes)
        #expect(log.completionCount == 1)
    }

    @Test func cancelWhilePausedCompletesWithCancelled() {
        let transport = MockTransport(server: server, mode: .manual)
        let sink = RecordingSink()
        let log = TransferLog(transport)
        let id = transport.start(request, sink: sink, events: log.handler)
        transport.advance(by: .milliseconds(100))
        transport.pause(id)
        let written = sink.bytes.count
        transport.cancel(id)
        transport.runUntilIdle()
        #expect(log.error?.code == .cancelled)
        #expect(sink.bytes.count == written)
        #expect(transport.activeTransfers.isEmpty)
    }

    @Test func cancelFromAnotherThreadStopsTheWrites() async {
        let transport = MockTransport(server: server, mode: .manual)
        let sink = RecordingSink()
        let log = TransferLog(transport)
        let id = transport.start(request, sink: sink, events: log.handler)
        transport.advance(by: .milliseconds(200))
        let written = sink.bytes.count
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                transport.cancel(id)
                continuation.resume()
            }
        }
        transport.runUntilIdle()
        #expect(sink.bytes.count == written)
        #expect(log.error?.code == .cancelled)
        #expect(log.completionCount == 1)
    }

    @Test func callsNamingFinishedOrUnknownTransfersDoNothing() {
        let transport = MockTransport(server: server, mode: .manual)
        let log = TransferLog(transport)
        let id = transport.start(request, sink: DiscardingSink(), events: log.handler)
        transport.runUntilIdle()
        #expect(log.summary != nil)
        for call in [transport.pause, transport.resume, transport.cancel] {
            call(id)
            call(TransferID(rawValue: 999))
        }
        transport.runUntilIdle()
        #expect(log.completionCount == 1)
        #expect(log.events.count == log.progress.count + 2)
    }

    @Test func cancelTwiceCompletesOnce() {
        let transport = MockTransport(server: server, mode: .manual)
        let log = TransferLog(transport) { event, transport in
            if event.isHead {
                transport.cancel(TransferID(rawValue: 1))
                transport.cancel(TransferID(rawValue: 1))
            }
        }
        _ = transport.start(request, sink: DiscardingSink(), events: log.handler)
        transport.runUntilIdle()
        #expect(log.milestones.count == 2)
        #expect(log.error?.code == .cancelled)
    }

    @Test func cancelOnTheLastProgressWinsOverSuccess() {
        let transport = MockTransport(server: server, mode: .manual)
        let sink = RecordingSink()
        let log = TransferLog(transport) { event, transport in
            if case .progress(let progress) = event, progress.receivedBytes == progress.expectedBytes {
                transport.cancel(TransferID(rawValue: 1))
            }
        }
        _ = transport.start(request, sink: sink, events: log.handler)
        transport.runUntilIdle()
        #expect(log.error?.code == .cancelled)
        #expect(sink.flushCount == 0)
    }

    @Test func cancellingTheDownloadTaskCancelsTheTransfer() async {
        server.setRoute(.file(body).faulting(.stallAfter(bytes: 10)), for: "/stall")
        let transport = MockTransport(server: server)
        var request = try! TransferRequest(url: "http://mock.test/stall")
        request.timeouts.lowSpeed = nil
        let task = Task { try await transport.download(request, to: DiscardingSink()) }
        task.cancel()
        let result = await task.result
        #expect(throws: TransportError.self) { try result.get() }
        // Await the transfer's end: the cancel travels through the executor.
        var yields = 0
        while !transport.activeTransfers.isEmpty, yields < 1_000_000 {
            await Task.yield()
            yields += 1
        }
        #expect(transport.activeTransfers.isEmpty)
    }
}
