import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import Testing

/// Concurrency limits, the waiting queue in list order, lists with their own limits,
/// operations on all tasks, and shutting down.
@Suite("DownloadEngine queue")
struct EngineQueueTests {
    /// `count` slow files (100 KB at 100 KB/s in 10 KB chunks) named /0.bin, /1.bin, …
    func harness(
        files count: Int, _ configure: @escaping (inout DownloadEngine.Configuration) -> Void = { _ in }
    ) throws -> (EngineHarness, [String], [MockBody]) {
        let h = try EngineHarness(chunkSize: 10_000, configure)
        var urls: [String] = []
        var bodies: [MockBody] = []
        for index in 0..<count {
            let body = MockBody.generated(seed: UInt64(index + 1), count: 100_000)
            h.server.setRoute(
                .file(body, entityTag: .fixed("\"\(index)\"")).throttled(toBytesPerSecond: 100_000),
                for: "/\(index).bin")
            urls.append(h.url("/\(index).bin"))
            bodies.append(body)
        }
        return (h, urls, bodies)
    }

    func states(_ h: EngineHarness, _ urls: [String]) -> [String] {
        urls.map { url in
            let state = h.engine.state(ofTask: url)
            return state == .pending && h.engine.isWaiting(url) ? "waiting" : "\(state)"
        }
    }

    @Test func theLimitRunsThatManyAndQueuesTheRestInListOrder() async throws {
        let (h, urls, bodies) = try harness(files: 4) { $0.maxDownloadCount = 2 }
        h.engine.download(urls)
        #expect(states(h, urls) == ["downloading", "downloading", "waiting", "waiting"])
        #expect(h.engine.waitingTasks() == [urls[2], urls[3]])
        h.advance(.seconds(1))  // the first two finish; the next two start
        #expect(states(h, urls) == ["finished", "finished", "downloading", "downloading"])
        h.runUntilIdle()
        #expect(states(h, urls) == Array(repeating: "finished", count: 4))
        for (index, body) in bodies.enumerated() { #expect(h.bytes(of: "\(index).bin") == body.allBytes) }
        let events = await h.recorder.wait { $0.filter { if case .finished = $0 { true } else { false } }.count == 4 }
        let started = events.compactMap { event -> String? in
            if case .started(let url, _) = event { url } else { nil }
        }
        #expect(started == urls)
        #expect(events.contains(.waiting(urls[2])))
    }

    @Test func aPausedTaskKeepsItsSlot() throws {
        let (h, urls, _) = try harness(files: 2) { $0.maxDownloadCount = 1 }
        h.engine.download(urls)
        h.advance(.milliseconds(300))
        h.engine.pauseTasks([urls[0]])
        h.advance(.seconds(5))
        #expect(states(h, urls) == ["paused", "waiting"])
        h.engine.stopTasks([urls[0]])
        #expect(states(h, urls) == ["stopped", "downloading"], "the freed slot goes to the waiting task")
    }

    @Test func loweringTheLimitQueuesTheSurplusAtTheEndOfTheListAndRaisingItResumesThem() throws {
        let (h, urls, bodies) = try harness(files: 3)
        h.engine.download(urls)
        h.advance(.milliseconds(500))
        h.engine.maxDownloadCount = 1
        #expect(states(h, urls) == ["downloading", "waiting", "waiting"])
        #expect(h.engine.slotHolders() == [urls[0]])
        h.advance(.zero)  // the two cancelled transfers drain
        #expect(h.engine.task(urls[1])?.record.resumeRecord?.offset == 50_000)
        #expect(h.engine.task(urls[2])?.record.resumeRecord?.offset == 50_000)

        h.engine.maxDownloadCount = 3
        #expect(states(h, urls) == ["downloading", "downloading", "downloading"])
        h.runUntilIdle()
        for (index, body) in bodies.enumerated() { #expect(h.bytes(of: "\(index).bin") == body.allBytes) }
        #expect(h.ranges("/1.bin") == ["- -", "bytes=50000- \"1\""])
        #expect(h.ranges("/2.bin") == ["- -", "bytes=50000- \"2\""])
        #expect(h.ranges("/0.bin") == ["- -"])
    }

    @Test func loweringTheLimitStopsAPausedSurplusTask() throws {
        let (h, urls, _) = try harness(files: 2)
        h.engine.download(urls)
        h.advance(.milliseconds(300))
        h.engine.pauseTasks([urls[1]])
        h.engine.maxDownloadCount = 1
        #expect(states(h, urls) == ["downloading", "stopped"], "a paused task is not queued to run")
    }

    @Test func whenATaskEndsTheNextWaitingOneStarts() throws {
        let (h, urls, _) = try harness(files: 3) { $0.maxDownloadCount = 1 }
        h.engine.download(urls)
        h.engine.deleteTasks([urls[0]])
        #expect(states(h, urls.suffix(2)) == ["downloading", "waiting"])
        h.engine.stopTasks([urls[1]])
        #expect(states(h, urls.suffix(2)) == ["pending", "downloading"])
    }

    @Test func stoppingAWaitingTaskTakesItOutOfTheQueue() throws {
        let (h, urls, _) = try harness(files: 2) { $0.maxDownloadCount = 1 }
        h.engine.download(urls)
        #expect(h.engine.stopTasks([urls[1]]).changed == [urls[1]])
        h.runUntilIdle()
        #expect(states(h, urls) == ["finished", "pending"])
        #expect(h.server.requests(for: "/1.bin").isEmpty)
    }

    @Test func eachListHasItsOwnLimit() throws {
        let (h, urls, _) = try harness(files: 6) { $0.maxDownloadCount = 2 }
        h.engine.setMaxDownloadCount(1, in: "pdf")
        h.engine.download(Array(urls[0..<3]), in: "pdf")
        h.engine.download(Array(urls[3..<6]), in: "mp3")
        #expect(states(h, urls) == ["downloading", "waiting", "waiting", "downloading", "downloading", "waiting"])
        #expect(h.engine.maxDownloadCount(in: "pdf") == 1)
        #expect(h.engine.maxDownloadCount(in: "mp3") == 2)
        #expect(h.engine.lists == ["mp3", "pdf"])
        #expect(h.engine.waitingTasks(in: "pdf") == [urls[1], urls[2]])

        h.engine.maxDownloadCount = 3  // the mp3 list follows the engine's limit, pdf keeps its own
        #expect(states(h, urls) == ["downloading", "waiting", "waiting", "downloading", "downloading", "downloading"])
        h.engine.setMaxDownloadCount(nil, in: "pdf")
        #expect(states(h, urls).allSatisfy { $0 == "downloading" })
        let report = h.engine.sampleActivity(in: "pdf")
        #expect(report.totals.downloadingCount == 3)
        h.engine.stopAllTasks(in: "mp3")
        #expect(states(h, Array(urls[3..<6])).allSatisfy { $0 == "stopped" || $0 == "pending" })
        #expect(states(h, Array(urls[0..<3])).allSatisfy { $0 == "downloading" })
    }

    @Test func theListOrderDrivesTheQueue() throws {
        let (h, urls, _) = try harness(files: 4) { $0.maxDownloadCount = 1 }
        h.engine.download(urls)
        h.engine.setListOrder([urls[3], urls[1]])
        #expect(h.engine.waitingTasks() == [urls[3], urls[1], urls[2]])
        #expect(h.engine.urlStrings() == [urls[3], urls[1], urls[0], urls[2]])
        h.advance(.seconds(1))
        #expect(states(h, urls) == ["finished", "waiting", "waiting", "downloading"])
        // The end of the list loses its slot first.
        h.engine.maxDownloadCount = 3
        #expect(states(h, urls) == ["finished", "downloading", "downloading", "downloading"])
        h.engine.maxDownloadCount = 1
        #expect(states(h, urls) == ["finished", "waiting", "waiting", "downloading"])
    }

    @Test func resumeAllQueuesBeyondTheLimitOrLiftsIt() throws {
        let (h, urls, _) = try harness(files: 3) {
            $0.maxDownloadCount = 1
            $0.downloadNewFileImmediately = false
        }
        h.engine.download(urls)
        #expect(h.engine.resumeAllTasks() == urls)
        #expect(states(h, urls) == ["downloading", "waiting", "waiting"])
        h.engine.stopAllTasks()
        #expect(states(h, urls) == ["pending", "pending", "pending"])
        #expect(h.engine.resumeAllTasks(underLimit: false) == urls)
        #expect(states(h, urls) == ["downloading", "downloading", "downloading"])
        #expect(h.engine.maxDownloadCount <= 0)
    }

    @Test func pauseAllSuspendsAndEmptiesTheQueue() throws {
        let (h, urls, _) = try harness(files: 3) { $0.maxDownloadCount = 2 }
        h.engine.download(urls)
        h.advance(.milliseconds(200))
        #expect(Set(h.engine.pauseAllTasks()) == Set(urls))
        #expect(states(h, urls) == ["paused", "paused", "pending"])
        #expect(Set(h.engine.resumeAllTasks()) == Set(urls))
        #expect(states(h, urls) == ["downloading", "downloading", "waiting"])

        h.engine.pauseDownloadBySuspendingSessionTask = false
        h.engine.pauseAllTasks()
        #expect(states(h, urls) == ["stopped", "stopped", "pending"], "without suspending, pause all stops all")
    }

    @Test func deleteAllRemovesEveryTaskAndFile() throws {
        let (h, urls, _) = try harness(files: 3) { $0.maxDownloadCount = 1 }
        h.engine.download(urls)
        h.advance(.seconds(1))
        #expect(h.engine.deleteAllTasks().count == 3)
        h.runUntilIdle()
        #expect(h.files.isEmpty)
        #expect(h.engine.urlStrings().isEmpty)
    }

    @Test func deleteFilesOfAllTasksKeepsTheTasks() throws {
        let (h, urls, _) = try harness(files: 2)
        h.engine.download(urls)
        h.runUntilIdle()
        #expect(h.engine.deleteFilesOfAllTasks() == urls)
        #expect(h.files.isEmpty)
        #expect(states(h, urls) == ["pending", "pending"])
    }

    @Test func shutDownStopsEverythingWithoutChangingStatesAndStartUpContinues() throws {
        let (h, urls, bodies) = try harness(files: 3) { $0.maxDownloadCount = 2 }
        h.engine.download(urls)
        h.advance(.milliseconds(400))
        h.engine.shutDown()
        #expect(h.engine.isShutDown)
        h.runUntilIdle()
        #expect(states(h, urls) == ["downloading", "downloading", "waiting"], "states do not change")
        #expect(h.transport.activeTransfers.isEmpty)
        #expect(h.engine.task(urls[0])?.record.resumeRecord?.offset == 40_000)
        #expect(h.visibleFiles.isEmpty)

        h.engine.startUp()
        h.runUntilIdle()
        #expect(states(h, urls) == ["finished", "finished", "finished"])
        for (index, body) in bodies.enumerated() { #expect(h.bytes(of: "\(index).bin") == body.allBytes) }
        #expect(h.ranges("/0.bin") == ["- -", "bytes=40000- \"0\""])
        #expect(h.ranges("/2.bin") == ["- -"])
    }

    @Test func heldWaitingTasksStayWaitingWhileTheRunningOnesFinish() throws {
        let (h, urls, bodies) = try harness(files: 4) { $0.maxDownloadCount = 2 }
        h.engine.download(urls)
        h.advance(.milliseconds(400))
        h.engine.holdsWaitingTasks = true
        #expect(h.engine.downloadingTaskCount == 2)
        h.runUntilIdle()
        #expect(states(h, urls) == ["finished", "finished", "waiting", "waiting"])
        #expect(h.engine.downloadingTaskCount == 0)
        // A task resumed meanwhile waits too.
        h.engine.stopTasks([urls[3]])
        h.engine.resumeTasks([urls[3]])
        h.runUntilIdle()
        #expect(states(h, urls) == ["finished", "finished", "waiting", "waiting"])
        #expect(h.ranges("/2.bin").isEmpty)

        h.engine.holdsWaitingTasks = false
        h.runUntilIdle()
        #expect(states(h, urls) == Array(repeating: "finished", count: 4))
        for (index, body) in bodies.enumerated() { #expect(h.bytes(of: "\(index).bin") == body.allBytes) }
    }
}
