import Foundation
import PeregrineCore
import Synchronization
import Testing

/// Code that blocks, run under `BlockingCallExecutor`, leaves the cooperative pool free.
struct BlockingCallExecutorTests {
    /// A latch that threads wait on with a deadline (a hang guard, not a timing).
    final class Latch: @unchecked Sendable {
        private let condition = NSCondition()
        private var isOpen = false

        func open() {
            condition.lock()
            isOpen = true
            condition.broadcast()
            condition.unlock()
        }

        /// Blocks the calling thread until opened; false when the deadline came first.
        func wait(seconds: Double) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            let deadline = Date(timeIntervalSinceNow: seconds)
            while !isOpen { if !condition.wait(until: deadline) { return isOpen } }
            return true
        }
    }

    @Test func workUnderTheExecutorRunsOnItsThreads() async {
        let inside = await withTaskExecutorPreference(BlockingCallExecutor.shared) { () async -> Bool in
            await Task.yield()
            return BlockingCallExecutor.shared.isCurrentThread
        }
        #expect(inside)
        #expect(!BlockingCallExecutor.shared.isCurrentThread)
    }

    /// As many tasks as the pool has threads block until a task on the pool opens the latch:
    /// on the pool's threads they would leave it none, and the latch would never open.
    @Test func blockedTasksLeaveThePoolFree() async {
        let latch = Latch()
        let blockers = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let opened = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<blockers {
                group.addTask {
                    await withTaskExecutorPreference(BlockingCallExecutor.shared) { () async -> Bool in
                        latch.wait(seconds: 20)
                    }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(50))
                latch.open()
                return true
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(opened.allSatisfy { $0 }, "a blocked task waited out its deadline: the pool had no thread left")
    }
}
