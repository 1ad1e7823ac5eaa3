import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import PeregrineTransport
import Testing

/// Speed limits on the mock transport's virtual clock: the average rate over a 10-second
/// window is within 5 % of the limit with 1 and 16 transfers, a change applies to running
/// transfers, task and global limits nest, and a task's limit is saved with its record.
@Suite("DownloadEngine speed limits")
struct EngineSpeedLimitTests {
    static let mebibyte: Int64 = 1 << 20

    static func limit(_ bytesPerSecond: Int64) throws -> SpeedLimit { try SpeedLimit(bytesPerSecond: bytesPerSecond) }

    /// Bytes each task received during `window` of virtual time, after `warmUp`.
    static func received(
        _ h: EngineHarness, _ urls: [String], warmUp: Duration = .seconds(2), window: Duration = .seconds(10)
    ) -> [Int64] {
        h.advance(warmUp)
        let before = urls.map { h.engine.receivedByteCount(ofTask: $0) }
        h.advance(window)
        return zip(urls, before).map { h.engine.receivedByteCount(ofTask: $0) - $1 }
    }

    static func expectRate(
        _ bytes: Int64, over window: Duration = .seconds(10), near rate: Int64, within tolerance: Double = 0.05,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let average = Double(bytes) / window.seconds
        #expect(
            abs(average - Double(rate)) <= tolerance * Double(rate),
            "average \(Int64(average)) B/s, limit \(rate) B/s", sourceLocation: sourceLocation)
    }

    @Test func oneTransferAveragesTheOverallLimit() throws {
        let h = try EngineHarness { $0.overallSpeedLimit = try? Self.limit(Self.mebibyte) }
        h.serve("/one.bin", count: 40 * Self.mebibyte)
        let url = h.url("/one.bin")
        h.engine.download([url])
        let bytes = Self.received(h, [url])
        Self.expectRate(bytes[0], near: Self.mebibyte)
        #expect(h.engine.state(ofTask: url) == .downloading)
    }

    @Test func sixteenTransfersShareTheOverallLimitFairly() throws {
        let rate = 2 * Self.mebibyte
        let h = try EngineHarness { $0.overallSpeedLimit = try? Self.limit(rate) }
        let urls = (0..<16).map { index in
            h.serve("/file\(index).bin", count: 8 * Self.mebibyte, seed: UInt64(index))
            return h.url("/file\(index).bin")
        }
        h.engine.download(urls)
        let bytes = Self.received(h, urls)
        let total = bytes.reduce(0, +)
        Self.expectRate(total, near: rate)
        // Each gets its share: a sixteenth, within 10 %.
        for share in bytes { Self.expectRate(share, near: rate / 16, within: 0.10) }
    }

    @Test func aChangedLimitAppliesToTheRunningTransfer() throws {
        let h = try EngineHarness { $0.overallSpeedLimit = try? Self.limit(Self.mebibyte) }
        h.serve("/change.bin", count: 40 * Self.mebibyte)
        let url = h.url("/change.bin")
        h.engine.download([url])
        Self.expectRate(Self.received(h, [url], window: .seconds(4))[0], over: .seconds(4), near: Self.mebibyte)
        h.engine.overallSpeedLimit = try Self.limit(256 << 10)
        Self.expectRate(Self.received(h, [url], warmUp: .seconds(1))[0], near: 256 << 10)
        // Raised again, and then without a limit: the rest arrives at once.
        h.engine.overallSpeedLimit = try Self.limit(2 * Self.mebibyte)
        Self.expectRate(
            Self.received(h, [url], warmUp: .seconds(1), window: .seconds(5))[0], over: .seconds(5),
            near: 2 * Self.mebibyte)
        h.engine.overallSpeedLimit = nil
        h.advance(.milliseconds(200))
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.task(url)?.record.state == .finished)
    }

    @Test func aTaskLimitNestsUnderTheOverallLimit() throws {
        let h = try EngineHarness { $0.overallSpeedLimit = try? Self.limit(Self.mebibyte) }
        h.serve("/slow.bin", count: 40 * Self.mebibyte, seed: 1)
        h.serve("/free.bin", count: 40 * Self.mebibyte, seed: 2)
        let slow = h.url("/slow.bin")
        let free = h.url("/free.bin")
        h.engine.download([DownloadItem(slow, speedLimit: try Self.limit(256 << 10)), DownloadItem(free)])
        let bytes = Self.received(h, [slow, free])
        // The limited task keeps to its own limit; the other takes the rest of the overall one.
        Self.expectRate(bytes[0], near: 256 << 10)
        Self.expectRate(bytes[1], near: 768 << 10)
        Self.expectRate(bytes[0] + bytes[1], near: Self.mebibyte)
    }

    @Test func aTaskLimitIsSavedAndChangesARunningTransfer() throws {
        let h = try EngineHarness()
        h.serve("/task.bin", count: 40 * Self.mebibyte)
        let url = h.url("/task.bin")
        h.engine.download([DownloadItem(url, speedLimit: try Self.limit(Self.mebibyte))])
        #expect(h.engine.speedLimit(ofTask: url) == (try Self.limit(Self.mebibyte)))
        #expect(h.engine.task(url)?.record.speedLimit == (try Self.limit(Self.mebibyte)))
        Self.expectRate(Self.received(h, [url])[0], near: Self.mebibyte)
        #expect(h.engine.setSpeedLimit(try Self.limit(512 << 10), forTask: url))
        #expect(h.engine.task(url)?.record.speedLimit == (try Self.limit(512 << 10)))
        Self.expectRate(Self.received(h, [url], warmUp: .seconds(1))[0], near: 512 << 10)
        #expect(!h.engine.setSpeedLimit(nil, forTask: h.url("/unknown")))
        // The record round-trips through Codable with its limit.
        let record = try #require(h.engine.task(url)?.record)
        let decoded = try JSONDecoder().decode(DownloadTaskRecord.self, from: JSONEncoder().encode(record))
        #expect(decoded.speedLimit == record.speedLimit)
    }

    @Test func aListLimitIsSharedByTheListsTransfersOnly() throws {
        let h = try EngineHarness()
        h.serve("/a.bin", count: 40 * Self.mebibyte, seed: 1)
        h.serve("/b.bin", count: 40 * Self.mebibyte, seed: 2)
        h.serve("/other.bin", count: 8 * Self.mebibyte, seed: 3)
        let list: DownloadListKey = "limited"
        h.engine.setSpeedLimit(try Self.limit(Self.mebibyte), forList: list)
        #expect(h.engine.speedLimit(ofList: list) == (try Self.limit(Self.mebibyte)))
        let (a, b, other) = (h.url("/a.bin"), h.url("/b.bin"), h.url("/other.bin"))
        h.engine.download([a, b], in: list)
        h.engine.download([other])
        let bytes = Self.received(h, [a, b])
        Self.expectRate(bytes[0] + bytes[1], near: Self.mebibyte)
        Self.expectRate(bytes[0], near: Self.mebibyte / 2, within: 0.10)
        // The task of the default list is not under the list's limit: it finished long ago.
        #expect(h.engine.state(ofTask: other) == .finished)
    }

    @Test func segmentsOfOneTaskShareItsLimit() throws {
        let h = try EngineHarness {
            $0.segmentation = Segmentation(maxConnectionsPerTask: 4, minimumSegmentSize: 1 << 20)
        }
        h.serve("/split.bin", count: 40 * Self.mebibyte)
        let url = h.url("/split.bin")
        h.engine.download([DownloadItem(url, speedLimit: try Self.limit(Self.mebibyte))])
        let bytes = Self.received(h, [url])
        #expect(h.ranges("/split.bin").count >= 4, "the task used several connections")
        Self.expectRate(bytes[0], near: Self.mebibyte)
    }
}
