import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Serialises a manager's operations, so that each is atomic with respect to both the list and
/// the engine (a check of the list and the engine call it decides stay together), and runs the
/// application's closures that an operation caused only after it ended, outside every lock.
///
/// The gate is taken first and by public operations only: never by a callback from the engine,
/// the queue's drain or the store, and never by a thread that holds the engine's or the state
/// lock (neither is held while another component is called). While it is held, the operation
/// calls the engine and takes the state lock, one after the other. An operation may call
/// another on the same thread (the gate is re-entrant), which is also what an application
/// closure does when it calls the manager.
///
/// A `pthread_mutex_t` rather than `Mutex`: the gate is held across calls, and ThreadSanitizer
/// sees its hand-offs.
package final class OperationGate: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The thread inside the gate, 0 when none. Only that thread writes its own identity here,
    /// so a thread reading its own identity knows it is inside.
    private let owner = Atomic<UInt>(0)
    /// Owned by the thread inside: how deep its operations are nested, and what to run after.
    private var depth = 0
    private var deferred: [@Sendable () -> Void] = []

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Whether the calling thread is inside an operation.
    var isInside: Bool { owner.load(ordering: .relaxed) == ThreadIdentity.current }

    /// Enters an operation: waits for the one running on another thread to end. Pair with
    /// ``leave()`` (`gate.enter(); defer { gate.leave() }`).
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

    /// Leaves an operation; the outermost one runs what ``afterOperation(_:)`` deferred, once
    /// the gate is open again.
    package func leave() {
        depth -= 1
        guard depth == 0 else { return }
        let work = deferred
        deferred = []
        owner.store(0, ordering: .relaxed)
        pthread_mutex_unlock(mutex)
        for item in work { item() }
    }

    /// Runs `work` now, or — on a thread inside an operation — right after its outermost
    /// operation ends.
    func afterOperation(_ work: @escaping @Sendable () -> Void) {
        if isInside {
            deferred.append(work)
        } else {
            work()
        }
    }
}
