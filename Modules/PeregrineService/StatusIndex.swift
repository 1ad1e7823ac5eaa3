import PeregrineCore
import Synchronization

/// The downloads grouped by aria2 status, in list order: what `tellActive`, `tellWaiting` and
/// `getGlobalStat` read, so that one of those calls with 10,000 tasks in the service costs its
/// answer, not a status for every task.
struct StatusIndex: Sendable {
    /// The active downloads, in list order.
    var active: [String] = []
    /// The waiting and paused downloads, in queue order (as `tellWaiting` pages them).
    var waiting: [String] = []
    /// How many downloads are complete or failed (removed ones are counted apart).
    var stopped = 0
}

/// Keeps the last ``StatusIndex`` until something changes.
///
/// A change is a call of the service that may change a download (the dispatcher invalidates
/// the index when such a call returns) or any event of the manager except progress (the
/// dispatcher's event follower invalidates it before it sends the event's notification, so a
/// client that got a notification reads the state after it). A change made by the application
/// directly on the manager shows once the follower has its event. Without a follower — a
/// dispatcher used without ``RPCService/run()`` — nothing is kept: every read builds anew.
///
/// Thread-safe. A read racing a change either sees the change or builds the index anew: the
/// generation is read before the engine, so an index built across a change is stored under the
/// generation before it and never served.
final class StatusIndexCache: Sendable {
    private let generation = Atomic<UInt64>(0)
    private let isFollowing = Atomic<Bool>(false)
    private let cached = Locked<(generation: UInt64, index: StatusIndex)?>(nil)

    /// Something may have changed: the next read builds the index anew.
    func invalidate() {
        generation.add(1, ordering: .sequentiallyConsistent)
    }

    /// Whether an event follower invalidates the index on every change (only then is it kept).
    func setFollowing(_ following: Bool) {
        isFollowing.store(following, ordering: .sequentiallyConsistent)
        invalidate()
    }

    /// The index: the kept one when nothing changed since it was built, else `build()`'s.
    func index(build: () -> StatusIndex) -> StatusIndex {
        let current = generation.load(ordering: .sequentiallyConsistent)
        let following = isFollowing.load(ordering: .sequentiallyConsistent)
        if following, let kept = cached.withLock({ $0 }), kept.generation == current { return kept.index }
        let index = build()
        if following {
            cached.withLock { kept in
                if kept.map({ $0.generation <= current }) ?? true { kept = (current, index) }
            }
        }
        return index
    }
}
