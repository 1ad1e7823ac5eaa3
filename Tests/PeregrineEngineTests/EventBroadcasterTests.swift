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

    @Test func nothingIsHeldWithoutSubscribers() {
        let broadcaster = EventBroadcaster<Int>()
        broadcaster.yield([1], holding: EventBroadcaster<Int>.Hold())
        #expect(broadcaster.heldCount == 0)
    }
}
