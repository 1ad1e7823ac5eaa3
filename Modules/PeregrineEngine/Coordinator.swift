import PeregrineCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one owner of a manager's state: a step runs on one thread at a time, and what a step
/// decides to do outside its state (transfer commands, store writes, events to the
/// application) waits in an ordered outbox until the outermost step ends, then runs on the same
/// thread with nothing held.
///
/// An engine alone has its own; a queue gives its engine the queue's, so that the engine's
/// state and the queue's lists are one state: an operation of the queue that checks its lists
/// and calls the engine is one step, and the engine's calls inside it are nested steps
/// (re-entrant) whose effects join the outer step's outbox. Transport completions and the
/// store's callbacks come back as steps of their own.
///
/// Nothing run from the outbox holds the coordinator, so an effect may wait for another thread
/// (a store sync, the drain's turn) that itself needs a step. Inside a step nothing waits for
/// another thread: whatever could must go to the outbox (``afterStep(_:)``).
///
/// A `pthread_mutex_t` rather than `Mutex`: held across calls, and ThreadSanitizer sees it.
package final class Coordinator: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The thread inside a step, 0 when none. Only that thread writes its own identity here,
    /// so a thread reading its own identity knows it is inside.
    private let owner = Atomic<UInt>(0)
    /// Owned by the thread inside: how deep its steps are nested, and what runs after them.
    private var depth = 0
    private var outbox: [@Sendable () -> Void] = []
    /// Work for the end of the outermost step, still inside it (see ``atStepEnd(_:)``).
    private var endings: [() -> Void] = []

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Whether the calling thread is inside a step.
    package var isInside: Bool { owner.load(ordering: .relaxed) == ThreadIdentity.current }

    /// Begins a step: waits for the step of another thread to end. Pair with ``leave()``.
    package func enter() {
        let me = ThreadIdentity.current
        if owner.load(ordering: .relaxed) == me {
            depth += 1
            return
        }
        pthread_mutex_lock(mutex)
        owner.store(me, ordering: .relaxed)
        depth = 1
    }

    /// Ends a step; the outermost one runs its ``atStepEnd(_:)`` work, opens the coordinator,
    /// then runs the outbox in order.
    package func leave() {
        if depth == 1, !endings.isEmpty {
            // Still inside: the work may take nested steps and add to the outbox, or more work
            // for the end.
            while !endings.isEmpty {
                let work = endings
                endings = []
                for item in work { item() }
            }
        }
        depth -= 1
        guard depth == 0 else { return }
        let work = outbox
        if !work.isEmpty { outbox = [] }
        owner.store(0, ordering: .relaxed)
        pthread_mutex_unlock(mutex)
        for item in work { item() }
    }

    /// Whether the calling thread's step is nested in another of its steps. Inside a step only.
    package var isNested: Bool { depth > 1 }

    /// Runs `work` at the end of the calling thread's outermost step, before the step ends (so
    /// it may read and change the state), in the order given: for what several nested steps
    /// gather and hand over once (the engine's section of a queue's operation). Inside a step
    /// only.
    package func atStepEnd(_ work: @escaping () -> Void) {
        endings.append(work)
    }

    /// Whether the calling thread's step is outermost and has nothing in the outbox: its
    /// effects may then run right after ``leave()`` without being stored. Inside a step only.
    package var endsWithEmptyOutbox: Bool { depth == 1 && outbox.isEmpty }

    /// Runs `work` now when the calling thread is in no step, else once its outermost step
    /// ends, after what the step put in the outbox before.
    package func afterStep(_ work: @escaping @Sendable () -> Void) {
        if isInside {
            outbox.append(work)
        } else {
            work()
        }
    }
}

/// A value only a ``Coordinator``'s step touches.
package final class Coordinated<Value>: @unchecked Sendable {
    package let coordinator: Coordinator
    private var value: Value

    package init(_ value: Value, coordinator: Coordinator) {
        self.value = value
        self.coordinator = coordinator
    }

    /// Runs `body` as a step (nested in the calling thread's step, if any).
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        coordinator.enter()
        defer { coordinator.leave() }
        return try body(&value)
    }

    /// `body` on the value, for a caller that entered a step of the coordinator itself.
    package func withinStep<Result>(_ body: (inout Value) -> Result) -> Result {
        body(&value)
    }
}
