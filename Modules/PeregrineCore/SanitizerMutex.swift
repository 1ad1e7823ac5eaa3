#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A lock with `Synchronization.Mutex`'s API over a `pthread_mutex_t`, which ThreadSanitizer
/// intercepts: it sees every hand-off (the contended one too) and reports lock-order inversions.
///
/// `Synchronization.Mutex` waits in the kernel on Linux through code ThreadSanitizer does not
/// instrument, so a sanitized run reports false races inside `withLock` and no lock-order
/// inversion at all. Sanitizer builds (`-Xswiftc -DPEREGRINE_TSAN`, `Scripts/sanitize.sh`)
/// therefore make the package's lock, ``Locked``, this type; other builds make it
/// `Synchronization.Mutex` itself, so this type costs them nothing.
///
/// The mutex is error-checking: locking it again on the thread that holds it traps, as
/// `Synchronization.Mutex` does, rather than hanging. Every lock also goes through
/// ``LockOrderChecker``, which aborts with a report on a lock-order inversion.
package struct SanitizerMutex<Value: ~Copyable>: ~Copyable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>
    private let id: LockOrderChecker.LockID

    /// Creates a lock that protects `initialValue`.
    package init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
        id = LockOrderChecker.register()
    }

    deinit {
        LockOrderChecker.forget(id)
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock; traps if the calling thread holds it.
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        lock()
        defer { unlock() }
        return try body(&value.pointee)
    }

    /// Runs `body` with the value if the lock is free at once, else returns `nil` without
    /// waiting.
    package borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard tryLock() else { return nil }
        defer { unlock() }
        return try body(&value.pointee)
    }

    private borrowing func lock() {
        LockOrderChecker.willLock(id)
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "Recursive call to lock SanitizerMutex (error \(locked))")
        LockOrderChecker.didLock(id)
    }

    private borrowing func tryLock() -> Bool {
        guard pthread_mutex_trylock(mutex) == 0 else { return false }
        LockOrderChecker.didLock(id)
        return true
    }

    private borrowing func unlock() {
        LockOrderChecker.willUnlock(id)
        pthread_mutex_unlock(mutex)
    }
}

// Like `Synchronization.Mutex`: the value only ever crosses threads under the lock, and it
// enters and leaves through `sending`.
extension SanitizerMutex: @unchecked Sendable where Value: ~Copyable {}
