import Synchronization

/// Hands every event to each open sequence: the engine's (``DownloadEngine/events()``), the
/// persistent queue's and the facade's.
package final class EventBroadcaster<Event: Sendable>: Sendable {
    private struct Subscribers {
        var next: UInt64 = 0
        var continuations: [UInt64: AsyncStream<Event>.Continuation] = [:]
        /// Events held back for an open ``Hold``, delivered before any later event.
        var held: [Event] = []

        /// Delivers the held events, then `events`.
        mutating func deliver(_ events: [Event]) {
            let earlier = held
            held = []
            for continuation in continuations.values {
                for event in earlier { continuation.yield(event) }
                for event in events { continuation.yield(event) }
            }
        }
    }

    /// A span of work whose events may wait until it ends (``release(_:)``): the consumers then
    /// wake once for all of them, not once an event. Nothing waits past an event yielded
    /// without the hold, which goes after them.
    package final class Hold: Sendable {
        /// Changed under the broadcaster's lock only.
        fileprivate let isOpen = Atomic(true)

        package init() {}
    }

    private let subscribers = Mutex(Subscribers())

    package init() {}

    /// A new sequence of the events from now on; it ends when `finish()` is called.
    package func subscribe() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let key = subscribers.withLock { subscribers in
            // What is held belongs to the sequences open before this one.
            subscribers.deliver([])
            let key = subscribers.next
            subscribers.next += 1
            subscribers.continuations[key] = continuation
            return key
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: key) }
        }
        return stream
    }

    /// How many events wait for a hold's release (for tests).
    package var heldCount: Int { subscribers.withLock { $0.held.count } }

    /// Whether anyone listens.
    package var hasSubscribers: Bool { subscribers.withLock { !$0.continuations.isEmpty } }

    /// Delivers events, in order; while `hold` is open, keeps them until it is released (or an
    /// event comes without it). Yielding never blocks and never runs a consumer inline.
    package func yield(_ events: [Event], holding hold: Hold? = nil) {
        guard !events.isEmpty else { return }
        subscribers.withLock { subscribers in
            guard !subscribers.continuations.isEmpty else { return }
            if let hold, hold.isOpen.load(ordering: .relaxed) {
                subscribers.held += events
            } else {
                subscribers.deliver(events)
            }
        }
    }

    /// Closes `hold` and delivers what is held; later events with it are delivered at once.
    package func release(_ hold: Hold) {
        subscribers.withLock { subscribers in
            hold.isOpen.store(false, ordering: .relaxed)
            subscribers.deliver([])
        }
    }

    /// Ends every sequence.
    package func finish() {
        let continuations = subscribers.withLock { subscribers in
            subscribers.deliver([])
            defer { subscribers.continuations.removeAll() }
            return Array(subscribers.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
