import Dispatch
import PeregrineCore
import PeregrineEngine
import Synchronization
import Testing

/// The engine's pool for work that blocks on the disk.
@Suite struct BlockingWorkPoolTests {
    @Test func everyJobRunsExactlyOnce() async throws {
        let pool = BlockingWorkPool(maxThreads: 3)
        let runs = Counts()
        let done = DispatchSemaphore(value: 0)
        for job in 0..<500 {
            pool.async {
                runs.add(job)
                done.signal()
            }
        }
        for _ in 0..<500 { done.wait() }
        #expect(runs.all == Dictionary(uniqueKeysWithValues: (0..<500).map { ($0, 1) }))
        #expect(pool.threadCount <= 3)
    }

    @Test func blockedJobsGetThreadsOfTheirOwnUpToTheLimit() async throws {
        // Four jobs that each wait until all four are running: they finish only if the pool
        // ran them at the same time, on four threads.
        let pool = BlockingWorkPool(maxThreads: 4)
        let running = Atomic<Int>(0)
        let allRunning = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<4 {
            pool.async {
                if running.add(1, ordering: .relaxed).newValue == 4 {
                    for _ in 0..<4 { allRunning.signal() }
                }
                _ = allRunning.wait(timeout: .now() + 30)
                finished.signal()
            }
        }
        for _ in 0..<4 { #expect(finished.wait(timeout: .now() + 60) == .success) }
        #expect(running.load(ordering: .relaxed) == 4)
        #expect(pool.threadCount == 4)
    }

    @Test func idleThreadsEnd() async throws {
        let pool = BlockingWorkPool(maxThreads: 2, idleTimeout: .milliseconds(50))
        let done = DispatchSemaphore(value: 0)
        pool.async { done.signal() }
        done.wait()
        var ended = false
        for _ in 0..<400 where !ended {
            try await Task.sleep(for: .milliseconds(25))
            ended = pool.threadCount == 0
        }
        #expect(ended, "the idle thread ended")
        // And the pool starts a new one for the next job.
        pool.async { done.signal() }
        #expect(done.wait(timeout: .now() + 30) == .success)
    }

    /// A job submitted while every thread was busy, and the idle timeout that follows, leave the
    /// pool's count of idle threads true: the next job after the last thread ended still gets a
    /// thread. Before, the busy thread's wake-up stayed pending, the thread counted itself idle
    /// twice and ended with one idle thread still counted, and the next job waited for it forever.
    @Test func aJobSubmittedToABusyPoolLeavesNoPhantomIdleThread() async throws {
        let pool = BlockingWorkPool(maxThreads: 1, idleTimeout: .milliseconds(20))
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        pool.async {
            release.wait()
            done.signal()
        }
        pool.async { done.signal() }
        release.signal()
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 60) == .success) }
        var ended = false
        for _ in 0..<2_400 where !ended {
            try await Task.sleep(for: .milliseconds(25))
            ended = pool.threadCount == 0
        }
        #expect(ended, "the idle thread ended")
        pool.async { done.signal() }
        #expect(done.wait(timeout: .now() + 60) == .success, "the job after the idle timeout ran")
    }
}

/// How many times each job ran.
private final class Counts: Sendable {
    private let counts = Locked<[Int: Int]>([:])
    func add(_ job: Int) { counts.withLock { $0[job, default: 0] += 1 } }
    var all: [Int: Int] { counts.withLock { $0 } }
}
