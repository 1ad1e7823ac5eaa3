#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The calling thread's identity (`pthread_self`) as a number: for re-entrant gates and drains
/// that recognise the thread holding them, and the lock-order checker's bookkeeping.
package enum ThreadIdentity {
    /// The calling thread's identity; never 0.
    package static var current: UInt {
        #if canImport(Darwin)
            UInt(bitPattern: pthread_self())
        #else
            UInt(pthread_self())
        #endif
    }
}
