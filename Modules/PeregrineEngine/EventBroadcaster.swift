import PeregrineCore
import Synchronization

/// Hands every event to each open sequence: the engine's (``DownloadEngine/events()``), the
/// persistent queue's and the facade's.
///
/// Events are queued in order under the broadcaster's lock and handed to the sequences outside
/// it, by one thread at a time (whichever finds nobody handing them over), so that no lock of
/// ours is held while the runtime takes its own: a sequence's termination handler runs under
/// its task's status lock and takes the broadcaster's lock, while `yield` may need that status
/// lock.
package final class EventBroadcaster<Event: Sendable>: Sendable {
    private struct Batch {
        var events: [Event]
        /// The sequences open when the events came, so that a later one never gets them.
        var continuations: [AsyncStream<Event>.Continuation]
        /// Whether the sequences end after these events.
        var finishes = false
    }

    private struct Subscribers {
        var next: UInt64 = 0
        var continuations: [UInt64: AsyncStream<Event>.Continuation] = [:] {
            didSet { open = Array(continuations.values) }
        }
        /// The values of `continuations`, made once per change of them rather than once per batch.
        var open: [AsyncStream<Event>.Continuation] = []
        /// Events held back for an open ``Hold``, delivered before any later event.
        var held: [Event] = []
        /// Batches waiting to be handed over, in order.
        var pending: [Batch] = []
        /// Whether a thread is handing the pending batches over.
        var isHandingOver = false

        /// Queues the held events, then `events`.
        mutating func enqueue(_ events: [Event]) {
            var all = events
            if !held.isEmpty {
                all = held + events
                held = []
            }
            guard !all.isEmpty, !open.isEmpty else { return }
            pending.append(Batch(events: all, continuations: open))
        }

        /// Whether the caller is to hand the pending batches over (nobody else is at it).
        mutating func takeHandingOver() -> Bool {
            guard !pending.isEmpty, !isHandingOver else { return false }
            isHandingOver = true
            return true
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

    private let subscribers = Locked(Subscribers())

    package init() {}

    /// A new sequence of the events from now on; it ends when `finish()` is called.
    package func subscribe() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let (key, handsOver) = subscribers.withLock { subscribers in
            // What is held belongs to the sequences open before this one.
            subscribers.enqueue([])
            let key = subscribers.next
            subscribers.next += 1
            subscribers.continuations[key] = continuation
            return (key, subscribers.takeHandingOver())
        }
        // Takes only the broadcaster's lock, which nobody holds while calling the runtime.
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: key) }
        }
        if handsOver { handOver() }
        return stream
    }

    /// How many events wait for a hold's release (for tests).
    package var heldCount: Int { subscribers.withLock { $0.held.count } }

    /// Whether anyone listens.
    package var hasSubscribers: Bool { subscribers.withLock { !$0.continuations.isEmpty } }

    /// Delivers events, in order; while `hold` is open, keeps them until it is released (or an
    /// event comes without it). Yielding never blocks and never runs a consumer inline; the
    /// events may reach the sequences through another thread that is handing events over.
    package func yield(_ events: [Event], holding hold: Hold? = nil) {
        guard !events.isEmpty else { return }
        let handsOver = subscribers.withLock { subscribers -> Bool in
            guard !subscribers.continuations.isEmpty else { return false }
            if let hold, hold.isOpen.load(ordering: .relaxed) {
                subscribers.held += events
                return false
            }
            subscribers.enqueue(events)
            return subscribers.takeHandingOver()
        }
        if handsOver { handOver() }
    }

    /// Closes `hold` and delivers what is held; later events with it are delivered at once.
    package func release(_ hold: Hold) {
        let handsOver = subscribers.withLock { subscribers -> Bool in
            hold.isOpen.store(false, ordering: .relaxed)
            subscribers.enqueue([])
            return subscribers.takeHandingOver()
        }
        if handsOver { handOver() }
    }

    /// Ends every sequence, after the events that came before.
    package func finish() {
        let handsOver = subscribers.withLock { subscribers -> Bool in
            subscribers.enqueue([])
            if !subscribers.continuations.isEmpty {
                subscribers.pending.append(
                    Batch(events: [], continuations: subscribers.open, finishes: true))
            }
            subscribers.continuations.removeAll()
            return subscribers.takeHandingOver()
        }
        if handsOver { handOver() }
    }

    /// Hands the pending batches over, outside the lock, until none is left.
    private func handOver() {
        while let batches = subscribers.withLock({ subscribers -> [Batch]? in
            guard !subscribers.pending.isEmpty else {
                subscribers.isHandingOver = false
                return nil
            }
            defer { subscribers.pending = [] }
            return subscribers.pending
        }) {
            for batch in batches {
                for continuation in batch.continuations {
                    for event in batch.events { continuation.yield(event) }
                    if batch.finishes { continuation.finish() }
                }
            }
        }
    }
}
