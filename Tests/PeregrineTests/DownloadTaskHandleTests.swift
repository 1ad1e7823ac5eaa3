import Foundation
import Peregrine
import PeregrineCore
import PeregrineCurlTransport
import PeregrineMockTransport
import TestSupport
import Testing

@Suite struct DownloadTaskHandleTests {
    @Test func handleReportsProgressAndSuccess() async throws {
        let h = try ManagerHarness()
        h.serve("/big.bin", count: 1_000_000)
        let progress = Shared<[Int64]>([])
        let (done, finished) = AsyncStream<URL>.makeStream()
        let handle = try h.manager.download(h.url("/big.bin"), fileName: "named.bin")
            .progress { report in progress.withLock { $0.append(report.receivedBytes) } }
            .success { finished.yield($0) }
        #expect(handle.urlString == h.url("/big.bin"))
        // Adding it again gives a handle on the same task, not a second download.
        #expect(try h.manager.download(h.url("/big.bin")).urlString == handle.urlString)
        h.runUntilIdle()
        let location = await firstValue(done)
        #expect(location?.lastPathComponent == "named.bin")
        #expect(!progress.withLock { $0 }.isEmpty)
        // A closure added after the end is called at once with the outcome.
        let late = Shared(false)
        handle.success { _ in late.withLock { $0 = true } }
        #expect(late.withLock { $0 })
    }

    @Test func handleReportsFailure() async throws {
        let h = try ManagerHarness()
        h.server.setRoute(.status(500), for: "/broken")
        let (failures, failed) = AsyncStream<FailureReason>.makeStream()
        let handle = try h.manager.download(h.url("/broken")).failure { failed.yield($0) }
        h.runUntilIdle()
        let reason = await firstValue(failures)
        #expect(reason?.httpStatus == 500)
        #expect(h.manager.handle(forTask: h.url("/nope")) == nil)
        #expect(h.manager.handle(forTask: handle.urlString) != nil)
    }

    @Test func aDownloadCanBeAwaited() async throws {
        let h = try ManagerHarness()
        let body = h.serve("/a.bin", count: 300_000)
        let handle = try h.manager.download(h.url("/a.bin"))
        async let location = handle.value
        h.runUntilIdle()
        let file = try await location
        #expect(FileManager.default.contents(atPath: file.path).map { [UInt8]($0) } == body.allBytes)
        // Awaiting an ended task returns at once, with the same file.
        #expect(try await handle.value == file)
        #expect(try await h.manager.download(h.url("/a.bin")).value == file)
        #expect(h.server.requests(for: "/a.bin").count == 1)
    }

    @Test func awaitingAFailureThrowsItsReason() async throws {
        let h = try ManagerHarness { $0.retryPolicy = nil }
        h.server.setRoute(.status(404), for: "/gone")
        let handle = try h.manager.download(h.url("/gone"))
        h.runUntilIdle()
        await #expect(throws: FailureReason.self) { try await handle.value }
        let results = await h.manager.results(of: [h.url("/gone"), h.url("/never-added")])
        #expect(results.count == 2)
        if case .failure(let reason) = results[h.url("/gone")] {
            #expect(reason.httpStatus == 404)
        } else {
            Issue.record("expected a failure")
        }
    }

    @Test func cancellingTheWaitStopsTheWaitingNotTheDownload() async throws {
        let h = try ManagerHarness()
        h.serve("/c.bin", count: 100_000)
        let handle = try h.manager.download(h.url("/c.bin"))
        let waiting = Task { () async -> FailureReason.Code? in
            do throws(FailureReason) {
                _ = try await handle.value
                return nil
            } catch {
                return error.code
            }
        }
        waiting.cancel()
        #expect(await waiting.value == .cancelled)
        h.runUntilIdle()
        #expect(h.state(h.url("/c.bin")) == .finished)
    }

    /// An await ends when its task is stopped, moved to the trash or deleted — while it waits,
    /// or when it starts after — with the typed reason; a resumed task is awaited again.
    @Test func anAwaitEndsWhenItsTaskIsStoppedTrashedOrDeleted() async throws {
        let h = try ManagerHarness()
        let body = MockBody.generated(seed: 4, count: 2_000_000)
        for name in ["s", "t", "d"] {
            h.server.setRoute(
                MockRoute.file(body, entityTag: .fixed("\"e\"")).throttled(toBytesPerSecond: 100_000),
                for: "/\(name).bin")
        }
        let stopped = try h.manager.download(h.url("/s.bin"))
        let trashed = try h.manager.download(h.url("/t.bin"))
        let deleted = try h.manager.download(h.url("/d.bin"))
        h.transport.advance(by: .seconds(1))
        async let stopEnd = Self.code(ofAwaiting: stopped)
        async let trashEnd = Self.code(ofAwaiting: trashed)
        async let deleteEnd = Self.code(ofAwaiting: deleted)
        // Each await must be waiting before its task is ended: the handle counts its waiters (the
        // transfers cannot end meanwhile: the virtual clock stands still).
        for _ in 0..<60_000 where stopped.waiterCount + trashed.waiterCount + deleted.waiterCount < 3 {
            try await Task.sleep(for: .milliseconds(1))
        }
        try #require([stopped, trashed, deleted].map(\.waiterCount) == [1, 1, 1])
        _ = try h.manager.stopTasks([h.url("/s.bin")])
        h.manager.isTrashOpened = true
        _ = try h.manager.deleteTasks([h.url("/t.bin")])
        h.manager.isTrashOpened = false
        _ = try h.manager.deleteTasks([h.url("/d.bin")])
        #expect(await stopEnd == .stopped)
        #expect(await trashEnd == .inTrash)
        #expect(await deleteEnd == .deleted)
        // Awaited after the end, at once; a new handle on the stopped task says the same.
        #expect(await Self.code(ofAwaiting: stopped) == .stopped)
        #expect(await Self.code(ofAwaiting: try #require(h.manager.handle(forTask: h.url("/s.bin")))) == .stopped)
        #expect(await Self.code(ofAwaiting: trashed) == .inTrash)
        // Resumed, the task is awaited to its file again.
        _ = try h.manager.resumeTasks([h.url("/s.bin")])
        async let file = stopped.value
        h.runUntilIdle()
        #expect(try await file.lastPathComponent == "s.bin")
    }

    /// The same against nginx through libcurl: awaits of throttled downloads (two minutes each,
    /// so none can end first however slow the machine) end when their tasks are stopped, trashed
    /// or deleted, and a resumed one is awaited again.
    @Test func anAwaitEndsWhenItsTaskIsStoppedTrashedOrDeletedAgainstNginx() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-await-nginx")
        defer { scratch.remove() }
        let nginx = try NginxServer(.init(limitRate: 32_768))
        defer { nginx.stop() }
        var random = SeededRandom(seed: 77)
        let data = Data(random.bytes(4 << 20))
        for name in ["s", "t", "d"] {
            try data.write(to: URL(fileURLWithPath: nginx.documentPath("/\(name).bin")))
        }
        try await nginx.start()
        let transport = CurlTransport()
        defer { transport.shutdown() }
        var configuration = DownloadManager.Configuration(
            downloadDirectory: scratch.path("downloads"), stateDirectory: scratch.path("state"), transport: transport)
        configuration.maxDownloadCount = 3
        let manager = try DownloadManager(identifier: "await", configuration: configuration)
        defer { manager.shutDown() }
        let urls = ["s", "t", "d"].map { nginx.httpURL("/\($0).bin") }
        let handles = try urls.map { try manager.download($0) }
        async let stopEnd = Self.code(ofAwaiting: handles[0])
        async let trashEnd = Self.code(ofAwaiting: handles[1])
        async let deleteEnd = Self.code(ofAwaiting: handles[2])
        // Each await must be waiting before its task is ended (a bound on a hang only).
        for _ in 0..<60_000 where handles.map(\.waiterCount).reduce(0, +) < 3 {
            try await Task.sleep(for: .milliseconds(1))
        }
        try #require(handles.map(\.waiterCount) == [1, 1, 1])
        _ = try manager.stopTasks([urls[0]])
        manager.isTrashOpened = true
        _ = try manager.deleteTasks([urls[1]])
        manager.isTrashOpened = false
        _ = try manager.deleteTasks([urls[2]])
        #expect(await stopEnd == .stopped)
        #expect(await trashEnd == .inTrash)
        #expect(await deleteEnd == .deleted)
        // Resumed, the task is awaited again, until the next stop.
        _ = try manager.resumeTasks([urls[0]])
        async let again = Self.code(ofAwaiting: handles[0])
        for _ in 0..<60_000 where handles[0].waiterCount < 1 { try await Task.sleep(for: .milliseconds(1)) }
        try #require(handles[0].waiterCount == 1)
        _ = try manager.stopTasks([urls[0]])
        #expect(await again == .stopped)
    }

    /// Resumed while the transfer its stop ended still drains (the mock transport runs nothing
    /// until told), a task is awaited again at once: the await waits for the new ending rather
    /// than ending with the stop.
    @Test func anAwaitRightAfterAResumeWaitsForTheNewEnding() async throws {
        let h = try ManagerHarness()
        h.server.setRoute(
            MockRoute.file(MockBody.generated(seed: 5, count: 500_000), entityTag: .fixed("\"e\""))
                .throttled(toBytesPerSecond: 100_000),
            for: "/r.bin")
        let handle = try h.manager.download(h.url("/r.bin"))
        h.transport.advance(by: .seconds(1))
        _ = try h.manager.stopTasks([h.url("/r.bin")])
        #expect(await Self.code(ofAwaiting: handle) == .stopped)
        _ = try h.manager.resumeTasks([h.url("/r.bin")])
        async let again = Self.code(ofAwaiting: handle)
        for _ in 0..<60_000 where handle.waiterCount < 1 { try await Task.sleep(for: .milliseconds(1)) }
        try #require(handle.waiterCount == 1, "the await after the resume ended with the stop")
        h.runUntilIdle()
        #expect(await again == nil)
        #expect(h.state(h.url("/r.bin")) == .finished)
    }

    /// A task moved to the trash is stopped on the way; when the stop's event reaches the
    /// handle first (from another thread, before the trashing operation ends), the await still
    /// ends with the trash, once the operation is done.
    @Test func aStopOnTheWayToTheTrashLeavesTheAwaitToTheTrash() async throws {
        let handle = DownloadTaskHandle(urlString: "http://example.test/t.bin")
        async let end = Self.code(ofAwaiting: handle)
        for _ in 0..<60_000 where handle.waiterCount < 1 { try await Task.sleep(for: .milliseconds(1)) }
        try #require(handle.waiterCount == 1)
        handle.expectHalt(FailureReason(.inTrash, message: "moved to the trash"))
        handle.halt(FailureReason(.stopped, message: "stopped"))
        #expect(handle.waiterCount == 1, "the stop on the way ended the await")
        handle.halt(FailureReason(.inTrash, message: "moved to the trash"))
        #expect(await end == .inTrash)
    }

    /// The code an await on `handle` ends with; nil when it ends with a file.
    static func code(ofAwaiting handle: DownloadTaskHandle) async -> FailureReason.Code? {
        let waiting = Task { () async -> FailureReason.Code? in
            do throws(FailureReason) {
                _ = try await handle.value
                return nil
            } catch {
                return error.code
            }
        }
        // An await that never ends fails the test (as cancelled) instead of holding the suite.
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(300))
            waiting.cancel()
        }
        defer { watchdog.cancel() }
        return await waiting.value
    }

    @Test func addingAKnownURLResumesItAndRefusalsSayWhy() async throws {
        let h = try ManagerHarness { $0.retryPolicy = nil }
        let body = MockBody.generated(seed: 3, count: 50_000)
        h.server.setRoutes([.status(503), .file(body, entityTag: .fixed("\"v\""))], for: "/flaky")
        let url = h.url("/flaky")
        _ = try h.manager.download(url)
        h.runUntilIdle()
        #expect(h.state(url).isFailed)
        // The same call again resumes the failed task; its handle sees the file.
        let again = try h.manager.download(url)
        h.runUntilIdle()
        #expect(try await again.value.lastPathComponent == "flaky")
        #expect(throws: DownloadManagerError.self) { try h.manager.download("not a url") }
        do {
            _ = try h.manager.download("ftp://example.org/x")
            Issue.record("an ftp URL was accepted")
        } catch {
            #expect(error.code == .invalidURL)
        }
        do {
            _ = try h.manager.download(h.url("/x"), checksum: "sha256=zz")
            Issue.record("a bad checksum was accepted")
        } catch {
            #expect(error.code == .invalidChecksum)
        }
        h.manager.isTrashOpened = true
        _ = try h.manager.deleteTasks([url])
        do {
            _ = try h.manager.download(url)
            Issue.record("a trashed task was added again")
        } catch {
            #expect(error.code == .inTrash)
        }
    }

    @Test func theLastProgressReportOfAFinishedDownloadIsComplete() async throws {
        let h = try ManagerHarness()
        h.serve("/small.bin", count: 700_000)
        let reports = Shared<[Double]>([])
        let handle = try h.manager.download(h.url("/small.bin"))
            .progress { report in reports.withLock { $0.append(report.fractionCompleted) } }
        h.runUntilIdle()
        _ = try await handle.value
        #expect(reports.withLock { $0.last } == 1)
    }
}
