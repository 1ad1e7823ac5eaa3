import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import Testing

/// Activity numbers on the virtual clock, progress throttling, events and handlers.
@Suite("DownloadEngine activity and events")
struct EngineActivityTests {
    @Test func activityReportsSpeedRemainingTimeStallsAndTheEnd() throws {
        let h = try EngineHarness(chunkSize: 10_000)
        let fast = MockBody.generated(seed: 1, count: 500_000)
        h.server.setRoute(.file(fast).throttled(toBytesPerSecond: 100_000), for: "/fast.bin")
        h.server.setRoute(
            .file(.generated(seed: 2, count: 500_000)).throttled(toBytesPerSecond: 100_000).faulting(
                .stallAfter(bytes: 150_000)), for: "/stall.bin")
        let fastURL = h.url("/fast.bin")
        let stallURL = h.url("/stall.bin")
        h.engine.download([fastURL, stallURL])
        _ = h.engine.sampleActivity()  // the baseline, at t = 0

        h.advance(.seconds(1))
        var report = h.engine.sampleActivity()
        #expect(report.tasks[fastURL]?.speed == 100_000)
        #expect(report.tasks[fastURL]?.receivedBytes == 100_000)
        #expect(report.tasks[fastURL]?.expectedBytes == 500_000)
        #expect(report.tasks[fastURL]?.remainingTime == .seconds(4))
        #expect(report.totals.speed == 200_000)
        #expect(report.totals.downloadingCount == 2)
        #expect(report.totals.progress == 0.2)

        h.advance(.seconds(1))
        report = h.engine.sampleActivity()
        #expect(report.tasks[stallURL]?.speed == 50_000)
        h.advance(.seconds(1))
        report = h.engine.sampleActivity()
        #expect(report.tasks[stallURL]?.speed == 0, "a stall reports 0")
        #expect(report.tasks[fastURL]?.speed == 100_000)
        #expect(report.tasks[stallURL]?.remainingTime == .seconds(7), "350 KB left at 50 KB/s over 3 s")

        h.advance(.seconds(2))  // fast finishes at t = 5
        report = h.engine.sampleActivity()
        #expect(report.tasks[fastURL]?.speed == -1)
        #expect(report.tasks[fastURL]?.detail == "500 KB")
        #expect(report.totals.finishedCount == 1)
        report = h.engine.sampleActivity()
        #expect(report.tasks[fastURL] == nil, "reported over once")

        h.engine.pauseTasks([stallURL])
        report = h.engine.sampleActivity()
        #expect(report.tasks[stallURL]?.speed == -1)
        #expect(report.tasks[stallURL]?.detail == "150 KB/500 KB")
        #expect(report.isIdle)
    }

    @Test func progressEventsComeAtMostFourTimesASecond() async throws {
        let h = try EngineHarness(chunkSize: 1000)
        h.server.setRoute(
            .file(.generated(seed: 1, count: 300_000)).throttled(toBytesPerSecond: 100_000), for: "/p.bin")
        let url = h.url("/p.bin")
        h.engine.download([url])
        h.runUntilIdle()  // 300 transport progress events over 3 s
        let events = await h.recorder.wait { $0.contains { if case .finished = $0 { true } else { false } } }
        let progress = events.compactMap { event -> Int64? in
            if case .progress(_, let received, let expected) = event {
                #expect(expected == 300_000)
                return received
            }
            return nil
        }
        #expect(progress.count >= 10 && progress.count <= 13, "\(progress.count) progress events in 3 s")
        #expect(progress == progress.sorted())
    }

    @Test func theEventSequenceOfAPausedAndResumedDownload() async throws {
        let h = try EngineHarness(chunkSize: 10_000) { $0.progressInterval = .seconds(100) }
        h.server.setRoute(
            .file(.generated(seed: 1, count: 200_000), entityTag: .fixed("\"e\"")).throttled(toBytesPerSecond: 100_000),
            for: "/e.bin")
        let url = h.url("/e.bin")
        h.engine.download([url])
        h.advance(.milliseconds(500))
        h.engine.pauseTasks([url])
        h.engine.resumeTasks([url])
        h.engine.pauseDownloadBySuspendingSessionTask = false
        h.engine.pauseTasks([url])
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        let events = await h.recorder.wait(for: url, count: 10)
        #expect(
            events == [
                .added(url), .started(url, offset: 0), .progress(url, receivedBytes: 10_000, expectedBytes: 200_000),
                .paused(url), .started(url, offset: 50_000), .stopped(url),
                // The new transfer starts once the stopped one drained, at its synced offset.
                .started(url, offset: 50_000), .progress(url, receivedBytes: 60_000, expectedBytes: 200_000),
                // Progress is throttled; its last report of a finished file says 100 %.
                .progress(url, receivedBytes: 200_000, expectedBytes: 200_000),
                .finished(url, file: URL(filePath: h.downloads + "/e.bin")),
            ])
    }

    @Test func aPerCallHandlerReplacesTheEnginesHandlerOnce() throws {
        let h = try EngineHarness()
        h.serve("/a.bin", count: 10)
        let mine = Shared<[String]>([])
        h.engine.download([h.url("/a.bin"), h.url("/missing")]) { url, result in
            mine.withLock { $0.append("\(url) \((try? result.get()) != nil)") }
        }
        h.runUntilIdle()
        #expect(mine.withLock { $0 }.sorted() == ["\(h.url("/a.bin")) true", "\(h.url("/missing")) false"])
        #expect(h.completed.isEmpty, "the engine's handler is not called for these")
        h.engine.restartTasks([h.url("/a.bin")])
        h.runUntilIdle()
        #expect(h.completed.map(\.0) == [h.url("/a.bin")], "the per-call handler was used once")
    }

    @Test func trackingCallsTheHandlerEachIntervalAndTheCompletionWhenAllIsPaused() async throws {
        let h = try EngineHarness(chunkSize: 10_000) { $0.activityInterval = .milliseconds(20) }
        h.server.setRoute(
            .file(.generated(seed: 1, count: 1_000_000)).throttled(toBytesPerSecond: 100_000), for: "/t.bin")
        let url = h.url("/t.bin")
        let (reports, reportContinuation) = AsyncStream<ActivityReport>.makeStream()
        let (done, doneContinuation) = AsyncStream<Void>.makeStream()
        h.engine.downloadActivityHandler = { reportContinuation.yield($0) }
        h.engine.downloadCompletionHandler = { doneContinuation.yield() }
        h.engine.download([url])
        h.engine.beginTrackingDownloadActivity()
        #expect(h.engine.isTrackingDownloadActivity)
        var iterator = reports.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.tasks[url]?.speed == 0, "the virtual clock has not moved")
        h.engine.pauseTasks([url])
        var last = first
        while let report = await iterator.next() {
            last = report
            if report.isIdle { break }
        }
        #expect(last?.tasks[url]?.speed == -1)
        var doneIterator = done.makeAsyncIterator()
        #expect(await doneIterator.next() != nil)
        #expect(!h.engine.isTrackingDownloadActivity)

        // Stopping by hand calls no completion.
        h.engine.resumeTasks([url])
        h.engine.beginTrackingDownloadActivity()
        h.engine.stopTrackingDownloadActivity()
        #expect(!h.engine.isTrackingDownloadActivity)
    }
}
