import Foundation
import Peregrine
import PeregrineCore
import Testing

@Suite struct DownloadManagerOperationTests {
    @Test func pauseStopResumeAndRestartByURL() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(2, size: 200_000)
        try h.manager.download(urls)
        #expect(try h.manager.pauseTasks([urls[0]]) == [urls[0]])
        #expect(h.state(urls[0]) == .paused)
        #expect(try h.manager.stopTasks(urls) == urls)
        #expect(try h.manager.pauseTasks(urls).isEmpty)
        #expect(try h.manager.resumeTasks(urls) == urls)
        h.runUntilIdle()
        for url in urls { #expect(h.state(url) == .finished) }
        #expect(try h.manager.resumeTasks(urls).isEmpty)
        #expect(try h.manager.restartTasks([urls[0]]) == [urls[0]])
        #expect(h.state(urls[0]) == .downloading)
        h.runUntilIdle()
        #expect(h.state(urls[0]) == .finished)
    }

    @Test func unknownURLThrowsAndChangesNothing() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(1)
        try h.manager.download(urls)
        let unknown = h.url("/nope.bin")
        #expect(throws: DownloadManagerError.self) { try h.manager.pauseTasks([urls[0], unknown]) }
        #expect(h.state(urls[0]) == .downloading)
        #expect(throws: DownloadManagerError.self) { try h.manager.deleteTasks([unknown, urls[0]]) }
        #expect(h.manager.downloadList == [urls])
        do {
            _ = try h.manager.stopTasks([unknown])
            Issue.record("no error")
        } catch {
            #expect(error.code == .unknownTask)
        }
    }

    @Test func operationsByIndexPathAndSection() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(3, size: 100_000)
        try h.manager.download(urls)
        let first = ListIndexPath(section: 0, item: 0)
        #expect(try h.manager.pauseTasks(at: [first]) == [first])
        #expect(h.state(urls[0]) == .paused)
        #expect(try h.manager.stopTasksInSection(0).count == 3)
        #expect(h.state(urls[2]) == .stopped || h.state(urls[2]) == .pending)
        #expect(
            try h.manager.resumeTasks(at: [ListIndexPath(section: 0, item: 2)]) == [ListIndexPath(section: 0, item: 2)])
        #expect(try h.manager.resumeTasksInSection(0).count == 2)
        h.runUntilIdle()
        #expect(try h.manager.restartTasksInSection(0).count == 3)
        #expect(try h.manager.pauseTasksInSection(0).count == 3)
        #expect(try h.manager.stopTasks(at: [first, ListIndexPath(section: 0, item: 1)]).count == 2)
        #expect(try h.manager.restartTasks(at: [first]).isEmpty)  // stopped before a byte: pending
        #expect(try h.manager.resumeTasks(at: [first]) == [first])
        h.runUntilIdle()
        #expect(h.state(urls[0]) == .finished)
        #expect(try h.manager.restartTasks(at: [first]) == [first])
        h.runUntilIdle()
        #expect(h.state(urls[0]) == .finished)
    }

    @Test func outOfBoundsLocationsThrowAndChangeNothing() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(1)
        try h.manager.download(urls)
        let bad = ListIndexPath(section: 0, item: 5)
        for operation in [
            { _ = try h.manager.pauseTasks(at: [ListIndexPath(section: 0, item: 0), bad]) },
            { _ = try h.manager.deleteTasks(at: [bad]) },
            { _ = try h.manager.pauseTasksInSection(3) },
            { _ = try h.manager.deleteTasksInSection(-1) },
        ] as [() throws -> Void] {
            #expect(throws: DownloadManagerError.self) { try operation() }
        }
        #expect(h.state(urls[0]) == .downloading)
        #expect(h.manager.downloadList == [urls])
        do {
            _ = try h.manager.stopTasks(at: [bad])
        } catch {
            #expect(error.code == .indexPathOutOfBounds)
        }
        do {
            _ = try h.manager.stopTasksInSection(7)
        } catch {
            #expect(error.code == .sectionOutOfBounds)
        }
    }

    @Test func deleteWithoutTrashRemovesTasksAndFiles() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(3)
        try h.manager.download(urls)
        h.runUntilIdle()
        let kept = try #require(h.manager.filePath(ofTask: urls[1]))
        let removed = try #require(h.manager.filePath(ofTask: urls[0]))
        let calls = Shared<[String]>([])
        h.manager.deleteCompletionHandler = { url, _, count, index in
            calls.withLock { $0.append("\(url) \(index)/\(count)") }
        }
        let deleted = try h.manager.deleteTasks([urls[0]])
        #expect(deleted == [urls[0]: ListIndexPath(section: 0, item: 0)])
        #expect(calls.withLock { $0 } == ["\(urls[0]) 1/1"])
        #expect(h.manager.deleteCompletionHandler == nil)
        #expect(!FileManager.default.fileExists(atPath: removed))
        #expect(
            try h.manager.deleteTasks(at: [ListIndexPath(section: 0, item: 0)], keepFinishedFile: true) == [
                urls[1]: ListIndexPath(section: 0, item: 0)
            ])
        #expect(FileManager.default.fileExists(atPath: kept))
        #expect(h.state(urls[1]) == .notInList)
        #expect(h.manager.downloadList == [[urls[2]]])
        #expect(h.manager.toDeleteList.isEmpty)
        #expect(!h.snapshot.tasks.contains { $0.urlString == urls[0] })
    }

    @Test func deleteFilesKeepsTasksPending() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(2)
        try h.manager.download(urls)
        h.runUntilIdle()
        let path = try #require(h.manager.filePath(ofTask: urls[0]))
        #expect(try h.manager.deleteFilesOfTasks([urls[0]]) == [urls[0]])
        #expect(h.state(urls[0]) == .pending)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try h.manager.deleteFilesOfTasks(at: [ListIndexPath(section: 0, item: 1)]).count == 1)
        #expect(try h.manager.deleteFilesOfTasksInSection(0).count == 2)
        #expect(h.manager.deleteFilesOfAllTasks().count == 2)
        #expect(h.manager.downloadList == [urls])
    }

    @Test func allTasksOperations() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(3, size: 100_000)
        try h.manager.download(urls)
        #expect(Set(h.manager.pauseAllTasks()) == Set(urls))
        for url in urls { #expect(h.state(url) == .paused) }
        #expect(Set(h.manager.stopAllTasks()) == Set(urls))
        #expect(Set(h.manager.resumeAllTasks()) == Set(urls))
        h.runUntilIdle()
        for url in urls { #expect(h.state(url) == .finished) }
        #expect(h.manager.resumeAllTasks().isEmpty)
        #expect(h.manager.deleteAllTasks(keepFinishedFile: true).count == 3)
        #expect(h.manager.downloadList.isEmpty)
        #expect(h.manager.engine.urlStrings().isEmpty)
    }

    @Test func queueFollowsTheListOrder() throws {
        let h = try ManagerHarness(manualMode: true) { $0.maxDownloadCount = 1 }
        let urls = h.serveFiles(3, size: 100_000)
        try h.manager.download(urls, inManualModeAtSection: 0, withTitle: "Q")
        #expect(h.state(urls[0]) == .downloading)
        #expect(h.manager.engine.waitingTasks() == [urls[1], urls[2]])
        try h.manager.moveTask(at: ListIndexPath(section: 0, item: 2), to: ListIndexPath(section: 0, item: 0))
        #expect(h.manager.engine.waitingTasks() == [urls[2], urls[1]])
        try h.manager.stopTasks([urls[0]])
        #expect(h.state(urls[2]) == .downloading)
        h.manager.maxDownloadCount = 0
        #expect(h.state(urls[1]) == .downloading)
        h.runUntilIdle()
        #expect(h.manager.resumeAllTasks(underLimit: false) == [urls[0]])
    }

    @Test func activityTrackingIsForwarded() throws {
        let h = try ManagerHarness()
        h.manager.downloadActivityHandler = { _ in }
        h.manager.downloadCompletionHandler = {}
        #expect(h.manager.downloadActivityHandler != nil)
        h.manager.beginTrackingDownloadActivity()
        #expect(h.manager.isTrackingDownloadActivity)
        h.manager.stopTrackingDownloadActivity()
        #expect(!h.manager.isTrackingDownloadActivity)
        h.manager.pauseDownloadBySuspendingSessionTask = false
        let url = h.serveFiles(1, size: 100_000)[0]
        try h.manager.download([url])
        #expect(try h.manager.pauseTasks([url]) == [url])
        #expect(h.state(url) == .stopped || h.state(url) == .pending)
    }

    @Test func failureIsReportedToHandlers() async throws {
        let h = try ManagerHarness()
        let url = h.url("/missing.bin")
        h.server.setRoute(.status(404), for: "/missing.bin")
        let global = Shared<[String]>([])
        h.manager.taskSuccessOrFailHandler = { url, result in
            global.withLock { $0.append("\(url) \((try? result.get()) == nil ? "failed" : "ok")") }
        }
        let own = Shared<Int>(0)
        try h.manager.download([url], successOrFailHandler: { _, _ in own.withLock { $0 += 1 } })
        h.runUntilIdle()
        #expect(h.state(url).isFailed)
        #expect(own.withLock { $0 } == 1)
        #expect(global.withLock { $0 }.isEmpty)
        let second = h.serveFiles(1, prefix: "ok")[0]
        try h.manager.download([second])
        h.runUntilIdle()
        #expect(global.withLock { $0 } == ["\(second) ok"])
        await h.recorder.waitForTask(url) { if case .failed = $0 { return true } else { return false } }
        #expect(try h.manager.resumeTasks([url]) == [url])
        h.runUntilIdle()
        await h.recorder.wait { events in
            events.filter { if case .task(.failed(url, _)) = $0 { return true } else { return false } }.count == 2
        }
        // The per-call handler was for that download; the next one reports to the manager's.
        #expect(own.withLock { $0 } == 1)
        #expect(global.withLock { $0 }.last == "\(url) failed")
    }
}
