import PeregrineCore
import PeregrineCurlTransport
import PeregrineMockTransport
import PeregrineTransport
import Synchronization
import Testing

@testable import TestSupport

/// Behaviour of the libcurl backend beyond the shared conformance suite: connection handling,
/// control from other threads, shutdown and timeouts.
@Suite("CurlTransport")
struct CurlTransportTests {
    /// A loopback server and a transport, torn down together.
    final class Fixture: Sendable {
        let routes = MockServer()
        let server: LoopbackHTTPServer
        let transport: CurlTransport

        init(configuration: CurlTransport.Configuration = .init()) throws {
            server = LoopbackHTTPServer(serving: routes)
            try server.start()
            transport = CurlTransport(configuration: configuration)
        }

        func request(_ path: String) throws -> TransferRequest {
            try TransferRequest(url: server.baseURL + path)
        }

        deinit {
            transport.shutdown()
            server.stop()
        }
    }

    @Test func concurrentTransfersReuseConnectionsWithinThePerHostCap() async throws {
        var configuration = CurlTransport.Configuration()
        configuration.maxConnectionsPerHost = 4
        let fixture = try Fixture(configuration: configuration)
        let count = 120
        for index in 0..<count {
            fixture.routes.setRoute(.file(.generated(seed: UInt64(index), count: 16 * 1024)), for: "/f\(index)")
        }
        let results = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for index in 0..<count {
                let request = try fixture.request("/f\(index)")
                group.addTask {
                    let sink = MemorySink()
                    _ = try await fixture.transport.download(request, to: sink)
                    return (index, sink.bytes)
                }
            }
            var collected: [Int: [UInt8]] = [:]
            for try await (index, bytes) in group { collected[index] = bytes }
            return collected
        }
        for index in 0..<count {
            #expect(results[index] == MockBody.generated(seed: UInt64(index), count: 16 * 1024).allBytes)
        }
        #expect(fixture.server.acceptedConnectionCount >= 1)
        #expect(fixture.server.acceptedConnectionCount <= 4, "the per-host cap and connection reuse hold")
    }

    @Test func pauseKeepsTheConnectionAndWritesNothingUntilResumed() async throws {
        let fixture = try Fixture()
        let body = MockBody.generated(seed: 7, count: 4 << 20)
        fixture.routes.setRoute(MockRoute.file(body).throttled(toBytesPerSecond: 16 << 20), for: "/slow")
        fixture.routes.setRoute(.file(.generated(seed: 8, count: 64 * 1024)), for: "/other")
        let sink = MemorySink(limit: 8 << 20)
        let paused = AsyncStream<Void>.makeStream()
        let transport = fixture.transport
        let idBox = Locked<TransferID?>(nil)
        let didPause = Locked(false)
        let recorder = TransferRecorder { event in
            guard case .progress = event else { return }
            let first = didPause.withLock { done in
                defer { done = true }
                return !done
            }
            if first, let id = idBox.withLock({ $0 }) {
                transport.pause(id)
                paused.continuation.yield()
            }
        }
        let id = idBox.withLock { box in
            let id = transport.start(try! fixture.request("/slow"), sink: sink, events: recorder.handler)
            box = id
            return id
        }
        for await _ in paused.stream { break }
        let bytesWhenPaused = sink.bytes.count
        #expect(bytesWhenPaused < body.count)

        // Time passes while a whole other download runs; the paused transfer must not move.
        let other = MemorySink()
        _ = try await transport.download(try fixture.request("/other"), to: other)
        #expect(other.bytes.count == 64 * 1024)
        #expect(sink.bytes.count == bytesWhenPaused, "nothing is written while paused")

        transport.resume(id)
        let result = await recorder.completion()
        #expect(result?.errorCode == nil)
        #expect(sink.bytes == body.allBytes)
        #expect(fixture.server.acceptedConnectionCount == 2, "the paused transfer kept its connection")
    }

    @Test func cancelFromAnotherThreadEndsTheTransfer() async throws {
        let fixture = try Fixture()
        // The server stalls after 1 MiB, so the cancel is what ends the transfer, however slow the machine.
        let body = MockBody.generated(seed: 9, count: 8 << 20)
        fixture.routes.setRoute(MockRoute.file(body).faulting(.stallAfter(bytes: 1 << 20)), for: "/slow")
        let progressed = AsyncStream<Void>.makeStream()
        let recorder = TransferRecorder { event in
            if case .progress = event { progressed.continuation.yield() }
        }
        let sink = DiscardingSink()
        // Only the cancel may end it: no too-slow rule, however long the test task waits to run.
        var request = try fixture.request("/slow")
        request.timeouts.lowSpeed = nil
        let id = fixture.transport.start(request, sink: sink, events: recorder.handler)
        for await _ in progressed.stream { break }
        fixture.transport.cancel(id)
        let result = await recorder.completion()
        #expect(result?.errorCode == .cancelled)
        #expect(sink.byteCount < body.count)
        let completions = recorder.events.filter { if case .completed = $0 { true } else { false } }
        #expect(completions.count == 1)
    }

    @Test func shutdownCancelsRunningTransfersAndLaterStarts() async throws {
        let fixture = try Fixture()
        fixture.routes.setRoute(
            MockRoute.file(.generated(seed: 3, count: 8 << 20)).faulting(.stallAfter(bytes: 1 << 20)),
            for: "/slow"
        )
        let running = TransferRecorder()
        _ = fixture.transport.start(try fixture.request("/slow"), sink: DiscardingSink(), events: running.handler)
        fixture.transport.shutdown()
        #expect(await running.completion()?.errorCode == .cancelled)

        let late = TransferRecorder()
        _ = fixture.transport.start(try fixture.request("/slow"), sink: DiscardingSink(), events: late.handler)
        #expect(await late.completion()?.errorCode == .cancelled)
    }

    @Test func aTransferSlowerThanTheLimitEndsAsTooSlow() async throws {
        let fixture = try Fixture()
        fixture.routes.setRoute(
            MockRoute.file(.generated(seed: 4, count: 1 << 20)).throttled(toBytesPerSecond: 2048),
            for: "/crawl"
        )
        var request = try fixture.request("/crawl")
        request.timeouts.lowSpeed = .init(bytesPerSecond: 100_000, duration: .seconds(1))
        let recorder = TransferRecorder()
        _ = fixture.transport.start(request, sink: DiscardingSink(), events: recorder.handler)
        let result = await recorder.completion()
        #expect(result?.errorCode == .tooSlow)
        if case .failure(let error) = result { #expect(error.failureReason.code == .tooSlow) }
    }

    /// "No byte for N s" (a low-speed rule of 1 byte/s) is kept by the transport itself: a
    /// burst before the stall does not buy the 5 s that libcurl's averaged speed would give it
    /// ("Operation too slow", after about 5 + N s).
    @Test func aTransferThatStallsAfterABurstEndsAsTooSlowOnTheTransportsOwnClock() async throws {
        let fixture = try Fixture()
        fixture.routes.setRoute(
            MockRoute.file(.generated(seed: 6, count: 1 << 20)).faulting(.stallAfter(bytes: 64 << 10)),
            for: "/stall"
        )
        var request = try fixture.request("/stall")
        request.timeouts.lowSpeed = .init(bytesPerSecond: 1, duration: .seconds(1))
        let recorder = TransferRecorder()
        _ = fixture.transport.start(request, sink: DiscardingSink(), events: recorder.handler)
        let result = await recorder.completion()
        #expect(result?.errorCode == .tooSlow)
        if case .failure(let error) = result {
            #expect(error.message.contains("no byte arrived for"), "\(error)")
        }
    }

    @Test func progressIsMonotonicAndEndsAtTheBodyLength() async throws {
        let fixture = try Fixture()
        let body = MockBody.generated(seed: 5, count: 3 << 20)
        fixture.routes.setRoute(.file(body), for: "/file")
        let recorder = TransferRecorder()
        _ = fixture.transport.start(try fixture.request("/file"), sink: DiscardingSink(), events: recorder.handler)
        let result = await recorder.completion()
        #expect(result?.errorCode == nil)
        let progress = recorder.events.compactMap { event -> TransferProgress? in
            if case .progress(let value) = event { value } else { nil }
        }
        #expect(!progress.isEmpty)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.receivedBytes < $1.receivedBytes })
        #expect(progress.last?.receivedBytes == body.count)
        #expect(progress.allSatisfy { $0.expectedBytes == body.count })
    }

    @Test func libcurlVersionIsReported() {
        #expect(CurlTransport.libcurlVersion.split(separator: ".").count >= 2)
    }
}
