import PeregrineCore
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
/// wrong.
///
/// Items run in the order they were put in line. A step of the coordinator puts its item in
/// line inside the step (``enqueue(_:)``, which never waits), so the items of steps run in the
/// order of the steps, whichever thread gets to the drain first; the thread then runs the drain
/// after its step (``finish(_:wait:)``). What an item returns runs once the thread has stopped
/// draining, outside the drain: an application's closures, or a call into the engine, may hand
/// work over again without waiting for themselves.
///
/// A thread that must know its item ran (a change synced before the call that made it returns)
/// waits for it; it holds no lock while it waits, and the thread at the drain needs nothing a
/// waiting thread holds.
package final class OrderedDrain: Sendable {
    /// An item; what it returns runs after the drain.
    package typealias Work = @Sendable () -> (@Sendable () -> Void)?

    /// An item's place in line.
    package struct Ticket: Sendable {
        fileprivate let number: UInt64
    }

    private struct State {
        /// Items in line, in order (taken from `head`).
        var ready: [Work] = []
        var head = 0
        /// Items put in line and items run so far: they run in order, so an item has run when
        /// its number is at most `ran`.
        var enqueued: UInt64 = 0
        var ran: UInt64 = 0
        var draining = false
        /// Threads waiting for an item, by its number.
        var waiters: [(number: UInt64, done: Completion)] = []
        /// What items handed over from inside the drain returned: it runs with the drain's own.
        var deferred: [@Sendable () -> Void] = []

        mutating func pop() -> Work? {
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

        /// Takes the drain when there is work and nobody is at it.
        mutating func claim() -> Bool {
            guard !draining, head < ready.count else { return false }
            draining = true
            return true
        }

        /// One more item ran: the threads waiting for it may go.
        mutating func markRun() -> [Completion] {
            ran += 1
            guard !waiters.isEmpty else { return [] }
            var woken: [Completion] = []
            waiters.removeAll { waiter in
                guard waiter.number <= ran else { return false }
                woken.append(waiter.done)
                return true
            }
            return woken
        }
    }

    private let state = Locked(State())
    /// The thread at the drain, if any (`pthread_self`), so that work handed over from inside an
    /// item runs at once rather than waiting for itself.
    private let drainer = Atomic<UInt>(0)

    package init() {}

    /// Puts `work` in line after everything put there before, without running anything: for a
    /// caller inside a step, which must not wait. Pair with ``finish(_:wait:)`` once the step
    /// is over.
    package func enqueue(_ work: @escaping Work) -> Ticket {
        state.withLock { state in
            state.ready.append(work)
            state.enqueued += 1
            return Ticket(number: state.enqueued)
        }
    }

    /// Runs the items in line when no other thread is at it. With `wait`, returns once the item
    /// of `ticket` ran — unless this thread is at the drain, which runs it in its turn after
    /// the current item.
    package func finish(_ ticket: Ticket, wait: Bool) {
        let atDrain = drainer.load(ordering: .acquiring) == ThreadIdentity.current
        let (drains, done) = state.withLock { state -> (Bool, Completion?) in
            if state.claim() { return (true, nil) }
            // Not drained here: another thread is at it, or the item ran already.
            guard wait, !atDrain, state.ran < ticket.number else { return (false, nil) }
            let done = Completion()
            state.waiters.append((ticket.number, done))
            return (false, done)
        }
        // A thread that drains runs everything in line, its own item with it.
        if drains { drain() }
        done?.wait()
    }

    /// Hands `work` over: it runs after everything put in line before it. With `wait`, returns
    /// once it ran.
    package func submit(wait: Bool, _ work: @escaping Work) {
        if drainer.load(ordering: .acquiring) == ThreadIdentity.current {
            runInline(work)
            return
        }
        finish(enqueue(work), wait: wait)
    }

    /// Work handed over by an item itself: the drain is this thread's, so it runs now; what it
    /// returns waits for the end of the drain, like the item's own.
    private func runInline(_ work: Work) {
        guard let afterwards = work() else { return }
        state.withLock { $0.deferred.append(afterwards) }
    }

    /// Runs items in line until there are none, then what they returned. It never stops while
    /// items are in line: a thread waiting for its item may hold what one of those closures
    /// needs (an application's closure calling an operation needs a step of the coordinator),
    /// so the closures run only once every waiting item has run.
    private func drain() {
        drainer.store(ThreadIdentity.current, ordering: .releasing)
        var afterwards: [@Sendable () -> Void] = []
        var woken: [Completion] = []
        var ranOne = false
        while true {
            let item = state.withLock { state -> Work? in
                if ranOne { woken = state.markRun() }
                if let item = state.pop() { return item }
                // Cleared with the drain given up, so never after another thread took it.
                drainer.store(0, ordering: .releasing)
                state.draining = false
                afterwards += state.deferred
                state.deferred = []
                return nil
            }
            for done in woken { done.signal() }
            woken = []
            guard let item else { break }
            if let after = item() { afterwards.append(after) }
            ranOne = true
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
