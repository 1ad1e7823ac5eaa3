import Foundation
import PeregrineCore
import PeregrineCurlTransport
import PeregrineTransport
import Synchronization
import TestSupport
import Testing

/// Bandwidth limiters on libcurl against a real nginx: limited downloads arrive byte for byte,
/// the limiter held them back (a count, never a time), and a limit changed while libcurl holds
/// a transfer paused for it lets the transfer go on.
@Suite("CurlTransport speed limits against nginx")
struct NginxSpeedLimitTests {
    /// A sink that runs `action` once, on the transport's thread, when `threshold` bytes were written.
    final class ThresholdSink: TransferSink {
        private let target = MemorySink()
        private let written = Locked<Int64>(0)
        private let threshold: Int64
        private let action: @Sendable () -> Void

        init(threshold: Int64, action: @escaping @Sendable () -> Void) {
            self.threshold = threshold
            self.action = action
        }

        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
            try target.write(bytes, at: offset)
            let crossed = written.withLock { total in
                defer { total += Int64(bytes.count) }
                return total < threshold && total + Int64(bytes.count) >= threshold
            }
            if crossed { action() }
        }

        func flush() throws {}

        var bytes: [UInt8] { target.bytes }
    }

    @Test func limitedDownloadsSharingALimiterArriveIntact() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let size = 6 << 20
        let first = try RandomFile.write(size: size, to: server.documentPath("/first.bin"))
        let second = try RandomFile.write(size: size, to: server.documentPath("/second.bin"))
        let downloads = try TemporaryDirectory(prefix: "peregrine-limits")
        defer { downloads.remove() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        // Both under one shared limit, one also under a task limit of its own.
        let shared = BandwidthLimiter(try SpeedLimit(bytesPerSecond: 16 << 20))
        let own = BandwidthLimiter(try SpeedLimit(bytesPerSecond: 8 << 20))
        var firstRequest = try TransferRequest(url: server.httpURL("/first.bin"))
        firstRequest.bandwidthLimiters = [own, shared]
        var secondRequest = try TransferRequest(url: server.httpURL("/second.bin"))
        secondRequest.bandwidthLimiters = [shared]

        async let firstRecord = TemporaryFileDownload.run(
            firstRequest, on: transport, to: downloads.path("first.bin"))
        async let secondRecord = TemporaryFileDownload.run(
            secondRequest, on: transport, to: downloads.path("second.bin"))
        let records = try await [firstRecord, secondRecord]

        for record in records {
            let summary = try #require(record.summary, "the download failed: \(String(describing: record.error))")
            #expect(summary.receivedBytes == Int64(size))
        }
        #expect(try FileDigest.sha256(ofFileAt: downloads.path("first.bin")) == first)
        #expect(try FileDigest.sha256(ofFileAt: downloads.path("second.bin")) == second)
        #expect(shared.chargedBytes == Int64(2 * size))
        #expect(own.chargedBytes == Int64(size))
        // 6 MiB at 8 MiB/s cannot pass without the limiter holding the transfer back.
        #expect(own.delayCount > 0)
        #expect(shared.delayCount > 0)
    }

    @Test func aLimitLoweredAndThenRemovedWhileHeldBackLetsTheTransferFinish() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let size = 4 << 20
        _ = try RandomFile.write(size: size, to: server.documentPath("/change.bin"))
        let expected = try Data(contentsOf: URL(fileURLWithPath: server.documentPath("/change.bin")))
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let limiter = BandwidthLimiter(try SpeedLimit(bytesPerSecond: 4 << 20))
        var request = try TransferRequest(url: server.httpURL("/change.bin"))
        request.bandwidthLimiters = [limiter]
        // After 1 MiB the limit drops to 1 KiB/s, so the rest would take an hour and libcurl holds
        // the transfer paused; a little later, from another thread, the limit goes away. Only a
        // transport that asks its limiters again while holding a transfer back finishes in time.
        let lowered = try SpeedLimit(bytesPerSecond: 1024)
        let delaysBeforeDrop = Locked(0)
        let sink = ThresholdSink(threshold: 1 << 20) {
            limiter.limit = lowered
            delaysBeforeDrop.withLock { $0 = limiter.delayCount }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { limiter.limit = nil }
        }

        let record = try await TransferMonitor.run(request, on: transport, sink: sink, timeout: .seconds(60))

        let summary = try #require(record.summary, "the download failed: \(String(describing: record.error))")
        #expect(summary.receivedBytes == Int64(size))
        #expect(sink.bytes == [UInt8](expected))
        #expect(limiter.limit == nil)
        // The chunk charged after the drop had to wait.
        #expect(limiter.delayCount > delaysBeforeDrop.withLock { $0 })
    }
}
