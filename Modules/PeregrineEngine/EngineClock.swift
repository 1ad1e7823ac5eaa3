#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The engine's sense of time, injected so that tests run on a virtual clock (a
/// `MockTransport`'s, say) and stay deterministic.
///
/// ``now`` is monotonic and drives speeds, progress throttling and checkpoints; ``date`` is the
/// wall clock and stamps records (added and finished dates).
public struct EngineClock: Sendable {
    /// Monotonic time since an arbitrary origin.
    public var now: @Sendable () -> Duration
    /// The current date, for records.
    public var date: @Sendable () -> Date

    /// Creates a clock from two functions.
    public init(now: @escaping @Sendable () -> Duration, date: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
        self.date = date
    }

    /// The system's continuous clock and wall clock.
    public static var continuous: EngineClock {
        let clock = ContinuousClock()
        let origin = clock.now
        return EngineClock(now: { origin.duration(to: clock.now) })
    }
}
