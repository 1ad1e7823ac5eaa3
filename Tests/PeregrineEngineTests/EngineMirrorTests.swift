import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import PeregrineTransport
import PeregrineVerification
import Testing

/// Issue 15 item 6: several URLs for one file, on the mock transport's virtual clock. Pieces
/// are spread over the mirrors; a mirror that fails, announces another size or has no validator
/// is dropped for the task and its range goes to another source; a task whose own URL fails
/// continues on a mirror; a mirror that serves other bytes is found by verification and the
/// retry does not use it again.
@Suite("DownloadEngine mirrors")
struct EngineMirrorTests {
    static let mebibyte: Int64 = 1 << 20

    static func harness(connections: Int, verified: Bool = false) throws -> EngineHarness {
        try EngineSegmentTests.harness(connections: connections) { configuration in
            if verified { configuration.verifier = ChecksumTaskVerifier(digests: OpenSSLDigests()) }
        }
    }

    /// How many transfers asked `path` first: each asks for the rest of the file (no range, or
    /// an open one), where further connections ask for closed ranges.
    static func transfers(_ h: EngineHarness, _ path: String) -> Int {
        gets(h, path).filter(startsATransfer).count
    }

    /// Whether a request is a transfer's first: no range, one to the end, or a fresh download's
    /// first pieces (from byte 0).
    static func startsATransfer(_ request: MockRequest) -> Bool {
        request.headers["Range"].map { $0.hasSuffix("-") || $0.hasPrefix("bytes=0-") } ?? true
    }

    /// GET requests to `path`.
    static func gets(_ h: EngineHarness, _ path: String) -> [MockRequest] {
        h.server.requests(for: path).filter { $0.method == "GET" }
    }

    @Test func piecesAreSpreadOverTheMirrorsEachWithItsOwnValidator() throws {
        let h = try Self.harness(connections: 4)
        let body = MockBody.generated(seed: 31, count: 12 * Self.mebibyte)
        // Three servers of the same file; each has its own ETag (as separate machines would).
        for (path, tag) in [("/main/f.bin", "\"m\""), ("/a/f.bin", "\"a\""), ("/b/f.bin", "\"b\"")] {
            h.server.setRoute(.file(body, entityTag: .fixed(tag)).throttled(toBytesPerSecond: 1 << 20), for: path)
        }
        let url = h.url("/main/f.bin")
        let added = h.engine.download([
            DownloadItem(url, mirrors: [h.url("/a/f.bin"), h.url("/b/f.bin"), h.url("/a/f.bin"), url])
        ])
        #expect(added.added == [url])
        // Duplicates of the URL and of each other are dropped when the task is added.
        #expect(h.engine.task(url)?.record.mirrors == [h.url("/a/f.bin"), h.url("/b/f.bin")])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "f.bin") == body.allBytes)
        #expect(h.engine.task(url)?.droppedURLs == [:])
        for (path, tag) in [("/a/f.bin", "\"a\""), ("/b/f.bin", "\"b\"")] {
            let requests = Self.gets(h, path)
            #expect(!requests.isEmpty, "no piece from \(path): \(h.ranges(path))")
            // Closed ranges only; a mirror's first request has no validator to send, its later
            // ones send its own.
            #expect(requests.allSatisfy { $0.headers["Range"]?.hasPrefix("bytes=") == true })
            #expect(requests.first?.headers["If-Range"] == nil)
            #expect(requests.dropFirst().allSatisfy { $0.headers["If-Range"] == tag }, "\(h.ranges(path))")
        }
        // 12 MiB at 1 MiB/s per connection over 4 connections: about 3 s, not 12.
        #expect(h.transport.now.offset < .seconds(6), "took \(h.transport.now.offset)")
    }

    @Test(arguments: ["size", "validator", "fault"])
    func aMirrorThatDoesNotFitOrFailsIsDroppedAndItsRangeGoesElsewhere(problem: String) throws {
        let h = try Self.harness(connections: 3)
        let body = MockBody.generated(seed: 32, count: 8 * Self.mebibyte)
        let good = MockRoute.file(body, entityTag: .fixed("\"g\"")).throttled(toBytesPerSecond: 1 << 20)
        h.server.setRoute(good, for: "/main/f.bin")
        let mirror: MockRoute
        switch problem {
        case "size":
            mirror = .file(MockBody.generated(seed: 32, count: 8 * Self.mebibyte + 1), entityTag: .fixed("\"g\""))
        case "validator":
            mirror = .file(body, entityTag: .none)
        default:
            mirror = good.faulting(.dropAfter(bytes: 512 << 10))
        }
        h.server.setRoute(mirror.throttled(toBytesPerSecond: 1 << 20), for: "/bad/f.bin")
        let url = h.url("/main/f.bin")
        h.engine.download([DownloadItem(url, mirrors: [h.url("/bad/f.bin")])])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "f.bin") == body.allBytes)
        // Within the transfer: one transfer, and the mirror asked once only.
        #expect(Self.transfers(h, "/main/f.bin") == 1, "\(h.ranges("/main/f.bin"))")
        #expect(Self.gets(h, "/bad/f.bin").count == 1, "\(h.ranges("/bad/f.bin"))")
        let reason = try #require(h.engine.task(url)?.droppedURLs[h.url("/bad/f.bin")], "the mirror was not dropped")
        switch problem {
        case "size": #expect(reason.message.contains("not the same file"), "\(reason)")
        case "validator": #expect(reason.message.contains("without ETag or Last-Modified"), "\(reason)")
        default: #expect(reason.code == .network, "\(reason)")
        }
    }

    @Test(arguments: [1, 4])
    func whenTheTasksOwnURLFailsTheDownloadContinuesOnAMirror(connections: Int) throws {
        let h = try Self.harness(connections: connections)
        let body = MockBody.generated(seed: 33, count: 4 * Self.mebibyte)
        h.server.setRoute(.status(404), for: "/gone/f.bin")
        h.server.setRoute(
            .file(body, entityTag: .fixed("\"m\"")).throttled(toBytesPerSecond: 1 << 20), for: "/mirror/f.bin")
        let url = h.url("/gone/f.bin")
        // No retry policy: going on to another URL of the file is not a retry of the failed one.
        h.engine.download([DownloadItem(url, mirrors: [h.url("/mirror/f.bin")])])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "f.bin") == body.allBytes)
        #expect(Self.gets(h, "/gone/f.bin").count == 1)
        #expect(h.engine.task(url)?.droppedURLs[url]?.httpStatus == 404)
    }

    @Test func aTaskWhoseEveryURLFailsFailsWithItsOwnURLsReason() throws {
        let h = try Self.harness(connections: 2)
        h.server.setRoute(.status(404), for: "/gone/f.bin")
        h.server.setRoute(.status(410), for: "/also-gone/f.bin")
        let url = h.url("/gone/f.bin")
        h.engine.download([DownloadItem(url, mirrors: [h.url("/also-gone/f.bin")])])
        h.runUntilIdle()
        guard case .failed(let reason) = h.engine.state(ofTask: url) else {
            Issue.record("the task did not fail: \(h.engine.state(ofTask: url))")
            return
        }
        // The last source's failure ends it; the first is remembered as dropped.
        #expect(reason.httpStatus == 410)
        #expect(h.engine.task(url)?.droppedURLs[url]?.httpStatus == 404)
        // Resuming tries every URL again.
        h.server.setRoute(
            .file(MockBody.generated(seed: 1, count: 1000), entityTag: .fixed("\"x\"")), for: "/gone/f.bin")
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.task(url)?.droppedURLs == [:])
    }

    /// A mirror of the same size whose bytes differ: verification finds it. The attempt that
    /// mixed two sources' bytes cannot tell which was wrong, so the next downloads use one
    /// source at a time; one that mismatches alone is dropped, and the file ends verified.
    @Test(arguments: [false, true])
    func aSourceServingOtherBytesIsFoundByVerificationAndNotUsedAgain(badSourceIsTheTasksOwn: Bool) throws {
        let h = try Self.harness(connections: 4, verified: true)
        let body = MockBody.generated(seed: 34, count: 8 * Self.mebibyte)
        let other = MockBody.generated(seed: 35, count: 8 * Self.mebibyte)
        let (main, mirror) = badSourceIsTheTasksOwn ? (other, body) : (body, other)
        h.server.setRoute(
            .file(main, entityTag: .fixed("\"1\"")).throttled(toBytesPerSecond: 1 << 20), for: "/main/f.bin")
        h.server.setRoute(
            .file(mirror, entityTag: .fixed("\"2\"")).throttled(toBytesPerSecond: 1 << 20), for: "/mirror/f.bin")
        let url = h.url("/main/f.bin")
        let digest = try StreamingHasher.digest(.sha256, of: body.allBytes)
        h.engine.download([
            DownloadItem(url, checksum: "sha256=" + digest.hexString, mirrors: [h.url("/mirror/f.bin")])
        ])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
        #expect(h.bytes(of: "f.bin") == body.allBytes)
        let bad = badSourceIsTheTasksOwn ? "/main/f.bin" : "/mirror/f.bin"
        let requestsToBad = Self.gets(h, bad).count
        if badSourceIsTheTasksOwn {
            // Mixed, then the task's own URL alone (mismatch: dropped), then the mirror alone.
            #expect(h.engine.task(url)?.mismatchCount == 2)
            #expect(h.engine.task(url)?.droppedURLs[url]?.code == .verification)
        } else {
            // Mixed, then the task's own URL alone, which verifies.
            #expect(h.engine.task(url)?.mismatchCount == 1)
        }
        // The last download started with a request for the whole file from the good source;
        // from then on, no request went to the bad one.
        let log = h.server.requests.filter { $0.method == "GET" }
        let good = badSourceIsTheTasksOwn ? "/mirror/f.bin" : "/main/f.bin"
        let last = try #require(log.lastIndex { $0.url.hasSuffix(good) && Self.startsATransfer($0) })
        #expect(log[last...].allSatisfy { !$0.url.hasSuffix(bad) }, "\(log)")
        #expect(requestsToBad >= 1)
    }

    @Test func anInvalidMirrorRefusesTheItemAndAStoredRecordKeepsTheMirrors() throws {
        let h = try Self.harness(connections: 2)
        let url = h.url("/main/f.bin")
        let added = h.engine.download([
            DownloadItem(url, mirrors: ["ftp://mirror.example/f.bin"]),
            DownloadItem(h.url("/other.bin"), startsImmediately: false, mirrors: [h.url("/m/other.bin")]),
        ])
        #expect(added.added == [h.url("/other.bin")])
        #expect(added.invalid.map(\.urlString) == [url])
        #expect(added.invalid.first?.error.code == .unsupportedScheme)
        #expect(h.engine.task(url) == nil)
        let record = try #require(h.engine.task(h.url("/other.bin"))?.record)
        let decoded = try JSONDecoder().decode(DownloadTaskRecord.self, from: JSONEncoder().encode(record))
        #expect(decoded.mirrors == [h.url("/m/other.bin")])
    }
}
