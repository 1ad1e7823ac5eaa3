import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The engine's sense of time, injected so that tests run on a virtual clock (a
/// `MockTransport`'s, say) and stay deterministic.
///
/// ``now`` is monotonic and drives speeds, progress throttling and checkpoints; ``date`` is the
/// wall clock and stamps records (added and finished dates); ``schedule`` runs work later on the
/// same clock (retries that wait).
public struct EngineClock: Sendable {
    /// Runs work once a delay has passed on the clock, on any thread.
    public typealias Scheduler = @Sendable (_ delay: Duration, _ work: @escaping @Sendable () -> Void) -> Void

    /// Monotonic time since an arbitrary origin.
    public var now: @Sendable () -> Duration
    /// The current date, for records.
    public var date: @Sendable () -> Date
    /// Runs work after a delay of ``now``'s time: Dispatch's timer by default; a virtual clock's
    /// own (a `MockTransport`'s `schedule(after:_:)`) in tests.
    public var schedule: Scheduler

    /// Creates a clock from its functions.
    public init(
        now: @escaping @Sendable () -> Duration, date: @escaping @Sendable () -> Date = { Date() },
        schedule: @escaping Scheduler = EngineClock.dispatchScheduler
    ) {
        self.now = now
        self.date = date
        self.schedule = schedule
    }

    /// Runs work on a Dispatch queue after the delay, in real time.
    public static let dispatchScheduler: Scheduler = { delay, work in
        let nanoseconds =
            max(0, delay.components.seconds) * 1_000_000_000 + max(0, delay.components.attoseconds)
            / 1_000_000_000
        DispatchQueue.global().asyncAfter(
            deadline: .now() + .nanoseconds(Int(min(nanoseconds, Int64(Int.max)))), execute: work)
    }

    /// The system's continuous clock and wall clock.
    public static var continuous: EngineClock {
        let clock = ContinuousClock()
        let origin = clock.now
        return EngineClock(now: { origin.duration(to: clock.now) })
    }
}
