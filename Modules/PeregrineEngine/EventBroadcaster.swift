import Synchronization

/// Hands every event to each open sequence: the engine's (``DownloadEngine/events()``), the
/// persistent queue's and the facade's.
package final class EventBroadcaster<Event: Sendable>: Sendable {
    private struct Subscribers {
        var next: UInt64 = 0
        var continuations: [UInt64: AsyncStream<Event>.Continuation] = [:]
    }

    private let subscribers = Mutex(Subscribers())

    package init() {}

    /// A new sequence of the events from now on; it ends when `finish()` is called.
    package func subscribe() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let key = subscribers.withLock { subscribers in
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

    /// Whether anyone listens.
    package var hasSubscribers: Bool { subscribers.withLock { !$0.continuations.isEmpty } }

    /// Delivers events, in order. Yielding never blocks and never runs a consumer inline.
    package func yield(_ events: [Event]) {
        guard !events.isEmpty else { return }
        subscribers.withLock { subscribers in
            for continuation in subscribers.continuations.values {
                for event in events { continuation.yield(event) }
            }
        }
    }

    /// Ends every sequence.
    package func finish() {
        let continuations = subscribers.withLock { subscribers in
            defer { subscribers.continuations.removeAll() }
            return Array(subscribers.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
