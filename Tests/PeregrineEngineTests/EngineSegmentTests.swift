import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import PeregrineTransport
import PeregrineVerification
import Synchronization
import Testing

/// Segmented downloads on the mock transport's virtual clock: how the file is split, dynamic
/// splitting, servers that cannot split, a fault in one piece, a file that changes between
/// pieces, pieces kept across a stop, and verification of a file that arrived out of order.
@Suite("DownloadEngine segmented downloads")
struct EngineSegmentTests {
    static let mebibyte: Int64 = 1 << 20

    static func harness(
        connections: Int, minimum: Int64 = 1 << 20, retries: Bool = false,
        _ configure: (inout DownloadEngine.Configuration) -> Void = { _ in }
    ) throws -> EngineHarness {
        try EngineHarness(chunkSize: 64 << 10) { configuration in
            configuration.segmentation = Segmentation(maxConnectionsPerTask: connections, minimumSegmentSize: minimum)
            if retries {
                configuration.retryPolicy = try? BackoffRetryPolicy(
                    maxRetries: 3, initialDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(8), jitter: 0,
                    date: { EngineHarness.date })
            }
            configure(&configuration)
        }
    }

    /// The byte ranges the GET requests asked for, as `start..<end` (end: the body's length for
    /// an open range or no range at all).
    static func requestedRanges(_ h: EngineHarness, _ path: String, length: Int64) -> [Range<Int64>] {
        h.server.requests(for: path).filter { $0.method == "GET" }.map { request in
            guard let value = request.headers["Range"], value.hasPrefix("bytes=") else { return 0..<length }
            let bounds = value.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            let start = Int64(bounds[0]) ?? 0
            let end = bounds.count > 1 ? Int64(bounds[1]).map { $0 + 1 } ?? length : length
            return start..<end
        }
    }

    @Test func aFileIsSplitOverTheConnectionsAndEveryConnectionStaysBusy() throws {
        let h = try Self.harness(connections: 4)
        // Throttled per connection, so that pieces run side by side on the virtual clock; the
        // first connection is four times faster, so it finishes first and takes work.
        let body = MockBody.generated(seed: 11, count: 16 * Self.mebibyte)
        let route = MockRoute.file(body, entityTag: .fixed("\"s\""))
        h.server.setRoutes(
            [route.throttled(toBytesPerSecond: 4 << 20), route.throttled(toBytesPerSecond: 1 << 20)], for: "/big.bin")
        let url = h.url("/big.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "big.bin") == body.allBytes)
        #expect(h.visibleFiles == ["big.bin"])
        let requests = h.server.requests(for: "/big.bin").filter { $0.method == "GET" }
        // The first request asks for the first two minimum pieces (learning the length, with no
        // validator to send yet); the others for closed ranges of the same file.
        #expect(requests.first?.headers["Range"] == "bytes=0-2097151")
        #expect(requests.first?.headers["If-Range"] == nil)
        for request in requests.dropFirst() {
            #expect(request.headers["Range"]?.hasPrefix("bytes=") == true)
            #expect(request.headers["If-Range"] == "\"s\"")
        }
        // Three more at once after the first head, then more as pieces finish and the largest
        // running one is halved.
        #expect(requests.count > 4, "no dynamic split: \(h.ranges("/big.bin"))")
        // 16 MiB at 1 MiB/s on each of 4 connections takes about 4 s, not 16.
        #expect(h.transport.now.offset < .seconds(8), "took \(h.transport.now.offset)")
    }

    @Test func aTaskSetsItsOwnConnectionCount() throws {
        let h = try Self.harness(connections: 1)
        let body = MockBody.generated(seed: 21, count: 8 * Self.mebibyte)
        for path in ["/wide.bin", "/narrow.bin"] {
            h.server.setRoute(.file(body, entityTag: .fixed("\"c\"")).throttled(toBytesPerSecond: 1 << 20), for: path)
        }
        let wide = h.url("/wide.bin")
        let narrow = h.url("/narrow.bin")
        h.engine.download([DownloadItem(wide, maxConnections: 4), DownloadItem(narrow)])
        h.runUntilIdle()
        #expect(h.bytes(of: "wide.bin") == body.allBytes)
        #expect(h.bytes(of: "narrow.bin") == body.allBytes)
        #expect(h.server.requests(for: "/wide.bin").filter { $0.method == "GET" }.count > 1)
        #expect(h.server.requests(for: "/narrow.bin").filter { $0.method == "GET" }.count == 1)
        #expect(h.engine.task(wide)?.record.maxConnections == 4)
        #expect(h.engine.task(narrow)?.record.maxConnections == nil)
    }

    @Test func aRunningTaskTakesANewConnectionCountFromWhereItIs() throws {
        let h = try Self.harness(connections: 1)
        let body = MockBody.generated(seed: 23, count: 8 * Self.mebibyte)
        h.server.setRoute(
            .file(body, entityTag: .fixed("\"c\"")).throttled(toBytesPerSecond: 1 << 20), for: "/grow.bin")
        let url = h.url("/grow.bin")
        h.engine.download([url])
        h.advance(.seconds(3))
        #expect(h.engine.state(ofTask: url) == .downloading)
        #expect(h.server.requests(for: "/grow.bin").filter { $0.method == "GET" }.count == 1)
        #expect(h.engine.setMaxConnections(4, forTask: url))
        #expect(h.engine.task(url)?.record.maxConnections == 4)
        #expect(h.engine.state(ofTask: url) == .downloading)
        h.runUntilIdle()
        #expect(h.bytes(of: "grow.bin") == body.allBytes)
        let ranges = Self.requestedRanges(h, "/grow.bin", length: 8 * Self.mebibyte)
        // The first transfer, then one that continues from what the first one had (not from
        // zero), then the pieces the added connections take.
        #expect(ranges.count > 2, "\(ranges)")
        #expect(ranges.dropFirst().allSatisfy { $0.lowerBound > 0 }, "\(ranges)")
        #expect(!h.engine.setMaxConnections(2, forTask: h.url("/unknown.bin")))
    }

    @Test func aTaskStaysOnOneConnectionWhenItSaysSo() throws {
        let h = try Self.harness(connections: 8)
        let body = MockBody.generated(seed: 22, count: 4 * Self.mebibyte)
        h.server.setRoute(.file(body, entityTag: .fixed("\"c\"")).throttled(toBytesPerSecond: 1 << 20), for: "/one.bin")
        let url = h.url("/one.bin")
        h.engine.download([DownloadItem(url, maxConnections: 1)])
        h.runUntilIdle()
        #expect(h.bytes(of: "one.bin") == body.allBytes)
        #expect(h.server.requests(for: "/one.bin").filter { $0.method == "GET" }.count == 1)
    }

    @Test func connectionCountsOutsideTheRangeAreClamped() throws {
        let h = try Self.harness(connections: 1)
        h.serve("/a.bin", count: 10)
        h.serve("/b.bin", count: 10)
        h.engine.download([
            DownloadItem(h.url("/a.bin"), maxConnections: 0), DownloadItem(h.url("/b.bin"), maxConnections: 500),
        ])
        #expect(h.engine.task(h.url("/a.bin"))?.record.maxConnections == 1)
        #expect(h.engine.task(h.url("/b.bin"))?.record.maxConnections == 64)
    }

    @Test func piecesNeverOverlapWhatAnotherPieceWrote() throws {
        let h = try Self.harness(connections: 8, minimum: 256 << 10)
        let body = MockBody.generated(seed: 12, count: 5 * Self.mebibyte + 12_345)
        h.server.setRoute(.file(body, entityTag: .fixed("\"o\"")).throttled(toBytesPerSecond: 700_000), for: "/odd.bin")
        let url = h.url("/odd.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.bytes(of: "odd.bin") == body.allBytes)
        // Every closed range the pieces asked for starts where no earlier piece is still to write:
        // the starts are distinct and the bytes asked for in all are not much more than the file.
        let ranges = Self.requestedRanges(h, "/odd.bin", length: body.count)
        #expect(Set(ranges.map(\.lowerBound)).count == ranges.count)
    }

    /// An empty file answers the first request's range with 416: it is asked for whole and
    /// finishes empty, as without splitting.
    @Test func anEmptyFileFinishesEmptyWhenSplitting() throws {
        let h = try Self.harness(connections: 4)
        h.serve("/empty.bin", count: 0)
        let url = h.url("/empty.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "empty.bin") == [])
        #expect(h.ranges("/empty.bin") == ["bytes=0-2097151 -", "- -"])
    }

    @Test(arguments: [false, true])
    func aServerThatCannotSplitGetsOneConnection(withoutValidator: Bool) throws {
        let h = try Self.harness(connections: 4)
        let body = MockBody.generated(seed: 13, count: 4 * Self.mebibyte)
        let route: MockRoute =
            withoutValidator
            ? .file(body, entityTag: .none)
            : MockRoute(status: 200, headers: [:], body: body, honoursRanges: false)
        h.server.setRoute(route, for: "/one.bin")
        let url = h.url("/one.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "one.bin") == body.allBytes)
        // The first request asks for the first pieces. A server without ranges answers it whole;
        // a 206 without a validator cannot be split or continued, so the file is asked for whole.
        #expect(h.ranges("/one.bin") == (withoutValidator ? ["bytes=0-2097151 -", "- -"] : ["bytes=0-2097151 -"]))
    }

    @Test func aSmallFileUsesOneConnection() throws {
        let h = try Self.harness(connections: 4)
        let body = h.serve("/small.bin", count: 1_500_000)
        let url = h.url("/small.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.bytes(of: "small.bin") == body.allBytes)
        #expect(h.ranges("/small.bin").count == 1)
    }

    @Test func aDroppedPieceIsRetriedWithoutFetchingTheOtherPiecesAgain() throws {
        let h = try Self.harness(connections: 4, retries: true)
        let body = MockBody.generated(seed: 14, count: 8 * Self.mebibyte)
        let route = MockRoute.file(body, entityTag: .fixed("\"d\"")).throttled(toBytesPerSecond: 1 << 20)
        // The second request (the first extra piece) drops half-way through its 2 MiB.
        h.server.setRoutes([route, route.faulting(.dropAfter(bytes: 1 << 20)), route], for: "/drop.bin")
        let url = h.url("/drop.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "drop.bin") == body.allBytes)
        #expect(h.engine.task(url)?.retryCount == 0)
        // Each piece had 1 MiB on disk when the drop ended the attempt; the retry asks for the
        // other halves only (3 MiB in closed ranges), not for the 7 MiB after the prefix again.
        let requests = h.server.requests(for: "/drop.bin").filter { $0.method == "GET" }
        let retried = Self.requestedRanges(h, "/drop.bin", length: body.count).enumerated()
            .filter { $0.offset >= 4 && requests[$0.offset].headers["Range"]?.hasSuffix("-") == false }
            .reduce(Int64(0)) { $0 + Int64($1.element.count) }
        #expect(retried <= 3 * Self.mebibyte, "the retry asked for \(retried) bytes: \(h.ranges("/drop.bin"))")
    }

    @Test func aFileThatChangesBetweenPiecesStartsOverAsAWhole() throws {
        let h = try Self.harness(connections: 4, retries: true)
        let old = MockBody.generated(seed: 15, count: 6 * Self.mebibyte)
        let new = MockBody.generated(seed: 16, count: 6 * Self.mebibyte)
        h.server.setRoutes(
            [
                MockRoute.file(old, entityTag: .fixed("\"old\"")).throttled(toBytesPerSecond: 1 << 20),
                MockRoute.file(new, entityTag: .fixed("\"new\"")).throttled(toBytesPerSecond: 1 << 20),
            ], for: "/changing.bin")
        let url = h.url("/changing.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        // Never a splice of the two versions.
        #expect(h.bytes(of: "changing.bin") == new.allBytes)
    }

    @Test func piecesOnDiskAreKeptAcrossAStopAndOnlyTheHolesAreFetched() throws {
        let h = try Self.harness(connections: 4) {
            $0.checkpoint = CheckpointPolicy(interval: .milliseconds(200), byteThreshold: 256 << 10)
        }
        let body = MockBody.generated(seed: 17, count: 8 * Self.mebibyte)
        h.server.setRoute(
            .file(body, entityTag: .fixed("\"k\"")).throttled(toBytesPerSecond: 1 << 20), for: "/keep.bin")
        let url = h.url("/keep.bin")
        h.engine.download([url])
        h.advance(.milliseconds(1_500))
        _ = h.engine.stopTasks([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .stopped)
        let record = try #require(h.engine.records().first { $0.urlString == url }?.resumeRecord)
        #expect(!record.completedRanges.isEmpty, "no piece past the prefix was recorded: \(record)")
        #expect(record.keptByteCount > 3 * Self.mebibyte, "\(record)")
        let before = h.server.requests(for: "/keep.bin").count
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "keep.bin") == body.allBytes)
        // The resumed requests ask only for bytes not yet on disk.
        let resumed = Self.requestedRanges(h, "/keep.bin", length: body.count).dropFirst(before)
        for range in resumed.dropFirst() {
            for kept in record.completedRanges {
                #expect(!range.overlaps(kept), "\(range) fetched again although \(kept) was kept")
            }
        }
        #expect(resumed.first?.lowerBound == record.offset)
    }

    /// Pieces kept by a segmented download are fetched around after a restart without splitting
    /// (one connection takes the holes), and dropped when the partial file is shorter than they
    /// claim: never a file padded with zeros.
    @Test(arguments: [false, true])
    func keptPiecesSurviveARestartWithoutSplitting(fileCutShort: Bool) throws {
        let first = try Self.harness(connections: 4) {
            $0.checkpoint = CheckpointPolicy(interval: .milliseconds(200), byteThreshold: 256 << 10)
        }
        let body = MockBody.generated(seed: 19, count: 8 * Self.mebibyte)
        let route = MockRoute.file(body, entityTag: .fixed("\"r\"")).throttled(toBytesPerSecond: 1 << 20)
        first.server.setRoute(route, for: "/restart.bin")
        let url = first.url("/restart.bin")
        first.engine.download([url])
        first.advance(.milliseconds(1_500))
        _ = first.engine.stopTasks([url])
        first.runUntilIdle()
        let record = try #require(first.engine.records().first { $0.urlString == url })
        let resume = try #require(record.resumeRecord)
        try #require(!resume.completedRanges.isEmpty)
        var partial = try #require(first.temporaryBytes(of: url))
        if fileCutShort { partial = Array(partial.prefix(Int(resume.completedRanges.last!.lowerBound))) }

        let second = try Self.harness(connections: 1)
        second.server.setRoute(route, for: "/restart.bin")
        try FileManager.default.createDirectory(atPath: second.downloads, withIntermediateDirectories: true)
        try Data(partial).write(to: URL(fileURLWithPath: second.downloads + "/" + record.temporaryFileName))
        second.engine.restore([record])
        second.engine.resumeTasks([url])
        second.runUntilIdle()
        #expect(second.engine.state(ofTask: url) == .finished)
        #expect(second.bytes(of: "restart.bin") == body.allBytes)
        let ranges = Self.requestedRanges(second, "/restart.bin", length: body.count)
        if fileCutShort {
            // The last piece was dropped: it is fetched again.
            #expect(ranges.contains { $0.contains(resume.completedRanges.last!.lowerBound) })
        } else {
            for range in ranges.dropFirst() {
                for kept in resume.completedRanges { #expect(!range.overlaps(kept), "\(range) overlaps \(kept)") }
            }
            #expect(ranges.count > 1, "one connection took every hole in turn: \(ranges)")
        }
    }

    @Test func aSegmentedFileIsVerifiedAfterItsPiecesArrived() throws {
        let h = try Self.harness(connections: 4) { $0.verifier = ChecksumTaskVerifier(digests: OpenSSLDigests()) }
        let body = MockBody.generated(seed: 18, count: 6 * Self.mebibyte)
        h.server.setRoute(
            .file(body, entityTag: .fixed("\"h\"")).throttled(toBytesPerSecond: 1 << 20), for: "/hashed.bin")
        h.server.setRoute(
            .file(body, entityTag: .fixed("\"h\"")).throttled(toBytesPerSecond: 1 << 20), for: "/wrong.bin")
        let digest = try StreamingHasher.digest(.sha256, of: body.allBytes)
        let url = h.url("/hashed.bin")
        let wrong = h.url("/wrong.bin")
        h.engine.download([
            DownloadItem(url, checksum: "sha256=" + digest.hexString),
            DownloadItem(wrong, checksum: "sha256=" + String(repeating: "0", count: 64)),
        ])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
        guard case .failed(let reason) = h.engine.state(ofTask: wrong) else {
            Issue.record("a wrong checksum passed: \(h.engine.state(ofTask: wrong))")
            return
        }
        #expect(reason.code == .verification)
    }

    /// Issue 15 item 3: a verified file is cut into chunks fetched in file order, and hashed in
    /// that order while it arrives — the front piece's bytes as they are written, the others'
    /// read back when the front reaches them — so the verdict gets the streamed digest, not a
    /// second pass over the file.
    @Test func aVerifiedSegmentedFileIsHashedInOrderWhileItArrives() throws {
        let verifier = SinkKeepingVerifier()
        let h = try Self.harness(connections: 4) { $0.verifier = verifier }
        let length = 64 * Self.mebibyte
        let body = MockBody.generated(seed: 31, count: length)
        h.server.setRoute(
            .file(body, entityTag: .fixed("\"o\"")).throttled(toBytesPerSecond: 2 << 20), for: "/ordered.bin")
        let url = h.url("/ordered.bin")
        let digest = try StreamingHasher.digest(.sha256, of: body.allBytes)
        h.engine.download([DownloadItem(url, checksum: "sha256=" + digest.hexString)])
        // 4 connections at 2 MiB/s take 4 MiB chunks in order: after 6 s about 48 MiB arrived,
        // and all but the chunks still running (at most 4 × 4 MiB) continue the hashed prefix.
        h.advance(.seconds(6))
        let sink = try #require(verifier.hashingSinks.withLock { $0.last }, "the download was not hashed as it came")
        // What other pieces wrote is read back on a queue of the transfer's: wait for it (the
        // virtual clock stands still meanwhile, so the hashed prefix can only grow to it).
        var hashed: Int64 = 0
        for _ in 0..<2_000 {
            guard case .hashing(let next) = sink.state else { break }
            hashed = next
            if hashed >= 32 * Self.mebibyte { break }
            usleep(10_000)
        }
        #expect(hashed >= 32 * Self.mebibyte, "only \(hashed) bytes hashed after 6 s; \(sink.state)")
        // A piece that ended let its file go: a dozen chunks done, only the running ones hold
        // a descriptor (and buffers) on the file.
        let open = Self.openDescriptors(under: h.downloads)
        #expect(open <= 2 * 4, "\(open) descriptors on the partial file with 4 connections")
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
        #expect(h.bytes(of: "ordered.bin") == body.allBytes)
        // The verdict had the streamed digest (a file sink there means a second pass).
        #expect(verifier.verdictSinks.withLock { $0 } == [true])
        // Every piece but the first asks for one chunk of at most 4 MiB, and the chunks were
        // taken in file order while there were any left.
        let ranges = Self.requestedRanges(h, "/ordered.bin", length: length)
        #expect(ranges.count >= 16, "\(ranges)")
        for range in ranges.dropFirst() { #expect(range.count <= 4 * Self.mebibyte, "\(range)") }
        let starts = ranges.dropFirst().prefix(12).map(\.lowerBound)
        #expect(starts == starts.sorted(), "chunks out of order: \(starts)")
    }

    /// How many of this process's open descriptors point into `directory`.
    static func openDescriptors(under directory: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)
            return target?.hasPrefix(directory + "/") == true
        }.count
    }

    /// A verified segmented download stopped midway and resumed: the digest primes from the
    /// prefix on disk and reads the kept pieces back; the file is verified, and a wrong
    /// checksum still fails.
    @Test(arguments: [true, false])
    func aResumedVerifiedSegmentedDownloadIsHashedFromTheFileOnDisk(rightChecksum: Bool) throws {
        let verifier = SinkKeepingVerifier()
        let h = try Self.harness(connections: 4) {
            $0.verifier = verifier
            $0.checkpoint = CheckpointPolicy(interval: .milliseconds(200), byteThreshold: 256 << 10)
        }
        let body = MockBody.generated(seed: 33, count: 24 * Self.mebibyte)
        h.server.setRoute(
            .file(body, entityTag: .fixed("\"r\"")).throttled(toBytesPerSecond: 1 << 20), for: "/resumed.bin")
        let url = h.url("/resumed.bin")
        let digest = try StreamingHasher.digest(.sha256, of: body.allBytes)
        let checksum = rightChecksum ? digest.hexString : String(repeating: "0", count: 64)
        h.engine.download([DownloadItem(url, checksum: "sha256=" + checksum)])
        h.advance(.milliseconds(2_500))
        _ = h.engine.stopTasks([url])
        h.runUntilIdle()
        let record = try #require(h.engine.records().first { $0.urlString == url }?.resumeRecord)
        #expect(record.offset > 0 && !record.completedRanges.isEmpty, "\(record)")
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        if rightChecksum {
            #expect(h.engine.state(ofTask: url) == .finished)
            #expect(h.engine.verificationResult(ofTask: url) == .verified)
            #expect(h.bytes(of: "resumed.bin") == body.allBytes)
            #expect(verifier.verdictSinks.withLock { $0 } == [true])
        } else {
            guard case .failed(let reason) = h.engine.state(ofTask: url) else {
                Issue.record("a wrong checksum passed: \(h.engine.state(ofTask: url))")
                return
            }
            #expect(reason.code == .verification)
        }
    }
}

/// The engine's checksum verifier, keeping the hashing sinks it made and whether each verdict
/// got one.
final class SinkKeepingVerifier: TaskFileVerifier {
    let base = ChecksumTaskVerifier(digests: OpenSSLDigests())
    let hashingSinks = Locked<[HashingSink]>([])
    let verdictSinks = Locked<[Bool]>([])

    func validate(checksum specification: String) throws(VerificationError) {
        try base.validate(checksum: specification)
    }

    func sink(wrapping sink: any TransferSink, for task: TaskContext) -> any TransferSink {
        let made = base.sink(wrapping: sink, for: task)
        if let hashing = made as? HashingSink { hashingSinks.withLock { $0.append(hashing) } }
        return made
    }

    func verify(_ sink: any TransferSink, for task: TaskContext) -> FailureReason? {
        verdict(sink, for: task).failure
    }

    func verdict(_ sink: any TransferSink, for task: TaskContext) -> TaskFileVerdict {
        verdictSinks.withLock { $0.append(sink is HashingSink) }
        return base.verdict(sink, for: task)
    }
}
