import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import PeregrineTransport
import Testing

/// One writer per partial file, whatever the records say: a second engine on the same
/// directory (a second process, a fleet service whose lease looked expired) that takes over a
/// task whose partial file a transfer still writes neither cuts, writes nor places the file.
@Suite("Partial file lock")
struct EnginePartFileLockTests {
    static let length: Int64 = 1 << 20

    /// Engine A downloads; engine B, on the same directory, is handed A's task with an older
    /// record (offset 65,536) and resumes it.
    @Test func aPartialFileAnotherWriterHoldsIsNeitherCutNorWritten() async throws {
        let a = try EngineHarness(chunkSize: 16 << 10)
        let body = MockBody.generated(seed: 5, count: Self.length)
        let route = MockRoute.file(body, entityTag: .fixed("\"w\"")).throttled(toBytesPerSecond: 100_000)
        a.server.setRoute(route, for: "/w.bin")
        let url = a.url("/w.bin")
        a.engine.download([url])
        a.advance(.seconds(2))
        let temporary = try #require(a.engine.temporaryFilePath(ofTask: url))
        let written = try #require(Self.size(temporary))
        #expect(written > 65_536)

        let b = try EngineHarness(chunkSize: 16 << 10) { $0.directory = a.downloads }
        b.server.setRoute(route, for: "/w.bin")
        let record = DownloadTaskRecord(
            urlString: url, state: .stopped,
            resumeRecord: ResumeRecord(offset: 65_536, validator: .entityTag("\"w\""), expectedLength: Self.length),
            temporaryFileName: URL(fileURLWithPath: temporary).lastPathComponent, addedAt: EngineHarness.date)
        #expect(b.engine.restore([record]).rejected.isEmpty)
        #expect(b.engine.resumeTasks([url]).changed == [url])
        b.advance(.milliseconds(500))
        // B asked for nothing and cut nothing; it waits for the file.
        #expect(b.server.requests(for: "/w.bin").isEmpty)
        #expect(Self.size(temporary) == written)
        let events = await b.recorder.wait { $0.contains { if case .retrying = $0 { true } else { false } } }
        let retrying = events.compactMap { event -> FailureReason? in
            if case .retrying(_, _, let reason) = event { reason } else { nil }
        }
        #expect(retrying.map(\.code) == [.partFileBusy], "\(events)")
        #expect(b.engine.state(ofTask: url) == .downloading)

        // A finishes its file, right to the last byte.
        a.runUntilIdle()
        #expect(a.engine.state(ofTask: url) == .finished)
        #expect(a.bytes(of: "w.bin") == body.allBytes)

        // B's next try finds the partial file gone (placed by A): the bytes its record counts
        // are not there, so it starts from zero rather than resume into a hole.
        b.runUntilIdle()
        #expect(b.engine.state(ofTask: url) == .finished)
        #expect(b.ranges("/w.bin") == ["- -"])
        let placed = try #require(b.engine.task(url)?.record.fileName)
        #expect(placed != "w.bin")
        #expect(b.bytes(of: placed) == body.allBytes)
        #expect(a.bytes(of: "w.bin") == body.allBytes)
    }

    /// A fresh start (no resume record) of a task whose partial file another transfer writes
    /// leaves the file alone: no unlink, no truncation.
    @Test func aFreshStartLeavesAnotherWritersFileAlone() async throws {
        let a = try EngineHarness(chunkSize: 16 << 10)
        let body = MockBody.generated(seed: 6, count: Self.length)
        let route = MockRoute.file(body, entityTag: .fixed("\"f\"")).throttled(toBytesPerSecond: 100_000)
        a.server.setRoute(route, for: "/f.bin")
        let url = a.url("/f.bin")
        a.engine.download([url])
        a.advance(.seconds(1))
        let temporary = try #require(a.engine.temporaryFilePath(ofTask: url))
        let written = try #require(Self.size(temporary))

        let b = try EngineHarness(chunkSize: 16 << 10) { $0.directory = a.downloads }
        b.server.setRoute(route, for: "/f.bin")
        let record = DownloadTaskRecord(
            urlString: url, state: .pending, temporaryFileName: URL(fileURLWithPath: temporary).lastPathComponent,
            addedAt: EngineHarness.date)
        #expect(b.engine.restore([record]).rejected.isEmpty)
        #expect(b.engine.resumeTasks([url]).changed == [url])
        b.advance(.milliseconds(500))
        #expect(b.server.requests(for: "/f.bin").isEmpty)
        #expect(Self.size(temporary) == written)
        a.runUntilIdle()
        #expect(a.bytes(of: "f.bin") == body.allBytes)
    }

    /// A child process started while a transfer holds its part file's lock does not inherit
    /// the lock's descriptor: it would hold the lock for as long as it lives, and the task's
    /// next transfer would find its own file busy.
    @Test func aChildProcessDoesNotInheritTheLock() async throws {
        let h = try EngineHarness(chunkSize: 16 << 10)
        h.server.setRoute(
            .file(.generated(seed: 8, count: Self.length), entityTag: .fixed("\"c\"")).throttled(
                toBytesPerSecond: 100_000), for: "/c.bin")
        let url = h.url("/c.bin")
        h.engine.download([url])
        h.advance(.seconds(1))
        let temporary = try #require(h.engine.temporaryFilePath(ofTask: url))
        // posix_spawn without closing anything, as a program that runs a helper (ffmpeg for
        // thumbnails) does: the child gets every descriptor not marked close-on-exec.
        var pid: pid_t = 0
        let words: [String] = ["/bin/sleep", "60"]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        #expect(posix_spawn(&pid, "/bin/sleep", nil, nil, arguments, environ) == 0)
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))
        let targets = (descriptors ?? []).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")
        }
        #expect(!targets.isEmpty, "the child's descriptors could not be read")
        #expect(!targets.contains(temporary), "\(targets)")
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
    }

    static func size(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}
