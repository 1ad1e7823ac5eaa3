import Foundation
import Synchronization
import TestSupport
import Testing

@testable import PeregrineEngine

/// Events yielded with an open hold wait for its release, or for the next event without it,
/// and every sequence gets every event in the order yielded.
@Suite struct EventBroadcasterTests {
    private func drain(_ stream: AsyncStream<Int>) async -> [Int] {
        var events: [Int] = []
        for await event in stream { events.append(event) }
        return events
    }

    @Test func heldEventsWaitForTheReleaseOrTheNextEventInTheirOrder() async {
        let broadcaster = EventBroadcaster<Int>()
        let first = broadcaster.subscribe()
        let hold = EventBroadcaster<Int>.Hold()

        broadcaster.yield([1, 2], holding: hold)
        #expect(broadcaster.heldCount == 2)
        broadcaster.yield([3])
        #expect(broadcaster.heldCount == 0, "an event without the hold did not deliver the held ones")
        broadcaster.yield([4], holding: hold)
        #expect(broadcaster.heldCount == 1)
        // A sequence opened now starts after what is held.
        let second = broadcaster.subscribe()
        #expect(broadcaster.heldCount == 0)
        broadcaster.yield([5], holding: hold)
        broadcaster.release(hold)
        #expect(broadcaster.heldCount == 0, "the release delivered nothing")
        broadcaster.yield([6], holding: hold)
        #expect(broadcaster.heldCount == 0, "held after the release")
        let other = EventBroadcaster<Int>.Hold()
        broadcaster.yield([7], holding: other)
        broadcaster.finish()

        #expect(await drain(first) == [1, 2, 3, 4, 5, 6, 7])
        #expect(await drain(second) == [5, 6, 7])
    }

    /// Sequences cancelled while two threads yield: every consumer ends, every yielding thread
    /// returns, and a sequence open throughout gets every event, each thread's in its order. (A
    /// cancelled sequence's termination handler runs under its task's status lock and takes the
    /// broadcaster's lock; a thread yielding under that lock waited for the status lock.)
    @Test(arguments: SeededRandom.seeds(from: "PEREGRINE_BROADCAST_SEED", defaults: [1, 2]))
    func consumersCancelledWhileThreadsYieldEndAndOrderHolds(seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let broadcaster = EventBroadcaster<Int>()
        let keeper = broadcaster.subscribe()
        let threads = 2
        let perThread = 5_000
        let finished = Atomic(0)
        for thread in 0..<threads {
            Thread.detachNewThread {
                for index in 0..<perThread { broadcaster.yield([thread * 1_000_000 + index]) }
                finished.add(1, ordering: .sequentiallyConsistent)
            }
        }
        var rounds = 0
        while finished.load(ordering: .sequentiallyConsistent) < threads || rounds < 20 {
            let consumer = Task {
                var count = 0
                for await _ in broadcaster.subscribe() { count += 1 }
                return count
            }
            for _ in 0..<Int.random(in: 0...20, using: &random) { await Task.yield() }
            consumer.cancel()
            _ = await consumer.value
            rounds += 1
            // A bound on a deadlock only: the threads yield 10,000 events in well under a second.
            if rounds > 200_000 { break }
        }
        #expect(finished.load(ordering: .sequentiallyConsistent) == threads, "a yielding thread never returned")
        broadcaster.finish()
        var last = Array(repeating: -1, count: threads)
        var count = 0
        var inOrder = true
        for await event in keeper {
            let thread = event / 1_000_000
            inOrder = inOrder && event % 1_000_000 == last[thread] + 1
            last[thread] = event % 1_000_000
            count += 1
        }
        #expect(count == threads * perThread)
        #expect(inOrder, "a thread's events came out of order")
    }

    @Test func nothingIsHeldWithoutSubscribers() {
        let broadcaster = EventBroadcaster<Int>()
        broadcaster.yield([1], holding: EventBroadcaster<Int>.Hold())
        #expect(broadcaster.heldCount == 0)
    }
}
