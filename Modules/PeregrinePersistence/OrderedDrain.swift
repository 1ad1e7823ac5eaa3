import PeregrineStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Work done one item at a time, in order, by whichever thread hands work over while no other
/// thread is at it — and with no lock held while an item runs. That is how the engine's changes
/// reach the store and the layers above it: the work takes the store's locks and a layer's lock
/// in turn, never one inside another, so no order between the components' locks exists to get
/// wrong (the engine hands its changes over after releasing its own lock).
///
/// Items run in the order they were handed over, except numbered ones (the engine's sections,
/// ``submit(section:wait:_:)``), which run in the order of their numbers: one handed over before
/// the numbers below it waits for them. What an item returns runs once the thread has
/// stopped draining, outside the drain: an application's closures, or a call into the engine,
/// may hand work over again without waiting for themselves.
///
/// A thread that must know its item ran (a change synced before the call that made it returns)
/// waits for it; it holds no lock while it waits, and the thread at the drain needs nothing a
/// waiting thread holds.
package final class OrderedDrain: Sendable {
    /// An item; what it returns runs after the drain.
    package typealias Work = @Sendable () -> (@Sendable () -> Void)?

    private struct Item {
        var work: Work
        var done: Completion?
    }

    private struct State {
        /// Items ready to run, in order (taken from `head`).
        var ready: [Item] = []
        var head = 0
        /// Numbered items waiting for the numbers below them, each with what came after it.
        var numbered: [UInt64: [Item]] = [:]
        /// The next number to run.
        var nextSection: UInt64 = 1
        var draining = false
        /// What items handed over from inside the drain returned: it runs with the drain's own.
        var deferred: [@Sendable () -> Void] = []

        mutating func pop() -> Item? {
            guard head < ready.count else {
                if !ready.isEmpty {
                    ready.removeAll(keepingCapacity: ready.capacity <= 1024)
                    head = 0
                }
                return nil
            }
            defer { head += 1 }
            return ready[head]
        }

        /// Moves the numbered items whose turn came to `ready`.
        mutating func release() {
            while let items = numbered.removeValue(forKey: nextSection) {
                ready += items
                nextSection += 1
            }
        }

        /// Takes the drain when there is work and nobody is at it.
        mutating func claim() -> Bool {
            guard !draining, head < ready.count else { return false }
            draining = true
            return true
        }
    }

    private let state = Mutex(State())
    /// The thread at the drain, if any (`pthread_self`), so that work handed over from inside an
    /// item runs at once rather than waiting for itself.
    private let drainer = Atomic<UInt>(0)

    package init() {}

    /// How many numbered items wait for a number below theirs (for tests).
    package var waitingSections: Int { state.withLock { $0.numbered.count } }

    /// Hands `work` over: it runs after everything handed over before it. With `wait`, returns
    /// once it ran.
    package func submit(wait: Bool, _ work: @escaping Work) {
        if drainer.load(ordering: .acquiring) == ThreadIdentity.current {
            runInline(work)
            return
        }
        let (drains, done) = state.withLock { state -> (Bool, Completion?) in
            // A thread that takes the drain runs its item itself: only a waiting one needs a
            // signal.
            let done = wait && state.draining ? Completion() : nil
            state.ready.append(Item(work: work, done: done))
            return (state.claim(), done)
        }
        finish(drains: drains, done: done)
    }

    /// Hands over the item numbered `section` (1, 2, 3…, each number once): it runs after the
    /// items numbered below it. With `wait`, returns once it ran — unless this thread is at the
    /// drain, which runs it in its turn after the current item.
    package func submit(section: UInt64, wait: Bool, _ work: @escaping Work) {
        let waits = wait && drainer.load(ordering: .acquiring) != ThreadIdentity.current
        let (drains, done) = state.withLock { state -> (Bool, Completion?) in
            if section < state.nextSection {
                // A number handed over twice (never by the engine): no turn to wait for.
                let done = waits && state.draining ? Completion() : nil
                state.ready.append(Item(work: work, done: done))
                return (state.claim(), done)
            }
            // A waiting thread needs a signal unless its item is next and it takes the drain
            // (then it runs the item itself).
            let runsItself = section == state.nextSection && !state.draining
            let done = waits && !runsItself ? Completion() : nil
            state.numbered[section, default: []].append(Item(work: work, done: done))
            state.release()
            return (state.claim(), done)
        }
        finish(drains: drains, done: done)
    }

    /// Drains when the thread took the drain; then waits for its item, if it has to (an item
    /// whose turn had not come when this thread drained runs on another thread).
    private func finish(drains: Bool, done: Completion?) {
        if drains { drain() }
        done?.wait()
    }

    /// Work handed over by an item itself: the drain is this thread's, so it runs now; what it
    /// returns waits for the end of the drain, like the item's own.
    private func runInline(_ work: Work) {
        guard let afterwards = work() else { return }
        state.withLock { $0.deferred.append(afterwards) }
    }

    /// Runs ready items until there are none, then what they returned. It never stops while
    /// items are ready: a thread waiting for its item may hold what one of those closures needs
    /// (an application's closure calling an operation needs a step of the coordinator), so the closures
    /// run only once every waiting item has run.
    private func drain() {
        drainer.store(ThreadIdentity.current, ordering: .releasing)
        var afterwards: [@Sendable () -> Void] = []
        while true {
            let item = state.withLock { state -> Item? in
                if let item = state.pop() { return item }
                // Cleared with the drain given up, so never after another thread took it.
                drainer.store(0, ordering: .releasing)
                state.draining = false
                afterwards += state.deferred
                state.deferred = []
                return nil
            }
            guard let item else { break }
            if let after = item.work() { afterwards.append(after) }
            item.done?.signal()
        }
        for after in afterwards { after() }
    }
}

extension OrderedDrain {
    /// Writes changes to `store` in the drain's order: `changes` is called when their turn
    /// comes, so that what it reads is the latest. Returns once they are synced, or written
    /// when the calling task runs a ``SyncBatch`` (synced by its end); a failure goes to `failed`.
    package func record(
        _ changes: @escaping @Sendable () -> [StoreChange], in store: any TaskStore,
        failed: @escaping @Sendable (StoreError) -> Void
    ) {
        let batch = SyncBatch.current
        submit(wait: true) {
            SyncBatch.$current.withValue(batch) { SyncBatch.record(changes(), in: store, failed: failed) }
            return nil
        }
    }
}

/// A one-shot signal a thread waits on (a mutex and a condition, which ThreadSanitizer sees).
private final class Completion: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var isDone = false

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func signal() {
        pthread_mutex_lock(mutex)
        isDone = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    func wait() {
        pthread_mutex_lock(mutex)
        while !isDone { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }
}
