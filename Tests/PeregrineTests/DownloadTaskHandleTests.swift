import Foundation
import Peregrine
import Testing

@Suite struct DownloadTaskHandleTests {
    @Test func handleReportsProgressAndSuccess() async throws {
        let h = try ManagerHarness()
        h.serve("/big.bin", count: 1_000_000)
        let progress = Locked<[Int64]>([])
        let (done, finished) = AsyncStream<URL>.makeStream()
        let handle = try #require(
            h.manager.download(h.url("/big.bin"), fileName: "named.bin")?
                .progress { report in progress.withLock { $0.append(report.receivedBytes) } }
                .success { finished.yield($0) })
        #expect(handle.urlString == h.url("/big.bin"))
        #expect(h.manager.download(h.url("/big.bin")) == nil)
        h.runUntilIdle()
        let location = await firstValue(done)
        #expect(location?.lastPathComponent == "named.bin")
        #expect(!progress.withLock { $0 }.isEmpty)
        // A closure added after the end is called at once with the outcome.
        let late = Locked(false)
        handle.success { _ in late.withLock { $0 = true } }
        #expect(late.withLock { $0 })
    }

    @Test func handleReportsFailure() async throws {
        let h = try ManagerHarness()
        h.server.setRoute(.status(500), for: "/broken")
        let (failures, failed) = AsyncStream<FailureReason>.makeStream()
        let handle = try #require(h.manager.download(h.url("/broken"))?.failure { failed.yield($0) })
        h.runUntilIdle()
        let reason = await firstValue(failures)
        #expect(reason?.httpStatus == 500)
        #expect(h.manager.handle(forTask: h.url("/nope")) == nil)
        #expect(h.manager.handle(forTask: handle.urlString) != nil)
    }
}
