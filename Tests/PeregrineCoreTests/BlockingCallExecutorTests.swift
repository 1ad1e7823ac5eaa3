import Foundation
import PeregrineCore
import Synchronization
import Testing

/// Code that blocks, run under `BlockingCallExecutor`, runs on the executor's threads, not the
/// cooperative pool's.
struct BlockingCallExecutorTests {
    @Test func workUnderTheExecutorRunsOnItsThreads() async {
        let inside = await withTaskExecutorPreference(BlockingCallExecutor.shared) { () async -> Bool in
            await Task.yield()
            return BlockingCallExecutor.shared.isCurrentThread
        }
        #expect(inside)
        #expect(!BlockingCallExecutor.shared.isCurrentThread)
    }

    /// Several tasks block their thread at once under the executor, across suspensions: every
    /// blocking stretch is on one of the executor's threads, and every task gets there (the
    /// executor's two threads take the queued ones in turn).
    @Test func blockingTasksRunOnTheExecutorsThreadsOnly() async {
        let results = await withTaskGroup(of: [Bool].self) { group in
            for _ in 0..<6 {
                group.addTask {
                    await withTaskExecutorPreference(BlockingCallExecutor.shared) { () async -> [Bool] in
                        var seen: [Bool] = []
                        for _ in 0..<3 {
                            usleep(5_000)  // a blocking call, as a database round trip is
                            seen.append(BlockingCallExecutor.shared.isCurrentThread)
                            await Task.yield()
                        }
                        return seen
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0 += $1 }
        }
        #expect(results.count == 18)
        #expect(results.allSatisfy { $0 }, "a blocking stretch ran off the executor's threads")
    }
}
