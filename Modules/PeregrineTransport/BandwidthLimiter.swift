import PeregrineCore
import Synchronization

/// A token bucket shared by every transfer under one speed limit: a task's, a list's, or a
/// whole manager's.
///
/// Transports charge each received chunk to every limiter of its request
/// (``TransferRequest/bandwidthLimiters``, through a ``BandwidthAccount``) and hold the transfer
/// back until the limiter has earned those bytes. A transfer may be under several limiters at
/// once (task, list, global); it waits for the slowest.
///
/// The bucket is kept as two running counts: the bytes ever charged, and the bytes ever
/// allowed, which grows at the rate and stays at most ``burst`` worth of bytes ahead of the
/// charges. A charge returns a ticket — the charged count after it — and the transfer may
/// receive again once the allowance reaches its ticket. Tickets are served in the order they
/// were taken, so transfers that share a limiter take turns: each gets an equal share, and a
/// transfer that needs less (a slow server) leaves the rest to the others. Over any long window,
/// the bytes received stay within the rate times the window plus one burst and one chunk per
/// transfer.
///
/// ``limit`` can change at any time, from any thread: bytes allowed until then count at the old
/// rate, waits are computed afresh at the new one. Transports hold a transfer back at most
/// ``recheckInterval`` before asking again, so a change takes effect within that time.
///
/// Thread-safe; every operation takes one short lock.
public final class BandwidthLimiter: Sendable, Hashable, CustomStringConvertible {
    /// How long a transport holds a transfer back before asking its limiters again.
    public static let recheckInterval: Duration = .milliseconds(100)

    /// Monotonic time since an arbitrary origin.
    public typealias Clock = @Sendable () -> Duration

    private struct State {
        var limit: SpeedLimit?
        var charged: Int64 = 0
        var allowed: Double = 0
        var updated: Duration
        var delays = 0

        /// Brings the allowance up to `now` at the current rate.
        mutating func refill(at now: Duration, burst: Duration) {
            defer { updated = max(updated, now) }
            guard let limit else {
                allowed = Double(charged)
                return
            }
            let rate = Double(limit.bytesPerSecond)
            let elapsed = max(.zero, now - updated)
            allowed = min(allowed + rate * elapsed.seconds, Double(charged) + rate * burst.seconds)
        }

        func wait(for ticket: Int64) -> Duration {
            guard let limit else { return .zero }
            let missing = Double(ticket) - allowed
            // Less than a byte short is on time: it spares a wake-up for a rounding error.
            guard missing >= 1 else { return .zero }
            return .nanoseconds(Int64((missing / Double(limit.bytesPerSecond) * 1e9).rounded(.up)))
        }
    }

    private let state: Locked<State>
    private let clock: Clock
    /// How far ahead of the charges the allowance may grow while nothing is received, in time
    /// at the rate: what a transfer may take at once after being idle.
    public let burst: Duration

    /// Creates a limiter.
    ///
    /// - Parameters:
    ///   - limit: the cap, or nil for none (the limiter then only counts).
    ///   - burst: how much idle time the limiter saves up; 100 ms of the rate by default.
    ///   - clock: the time the limiter counts in; the system's continuous clock by default. A
    ///     limiter used with a `MockTransport` takes the transport's virtual clock.
    public init(
        _ limit: SpeedLimit? = nil, burst: Duration = .milliseconds(100),
        clock: @escaping Clock = BandwidthLimiter.continuousClock()
    ) {
        self.clock = clock
        self.burst = max(burst, .zero)
        state = Locked(State(limit: limit, updated: clock()))
    }

    /// A clock reading the system's continuous clock from the moment it was made.
    public static func continuousClock() -> Clock {
        let clock = ContinuousClock()
        let origin = clock.now
        return { origin.duration(to: clock.now) }
    }

    /// The cap; nil for none. Setting it takes effect for the waits computed from then on.
    public var limit: SpeedLimit? {
        get { state.withLock { $0.limit } }
        set {
            let now = clock()
            state.withLock { state in
                state.refill(at: now, burst: burst)
                state.limit = newValue
                if newValue == nil { state.allowed = Double(state.charged) }
            }
        }
    }

    /// The bytes charged so far, by every transfer.
    public var chargedBytes: Int64 { state.withLock { $0.charged } }

    /// How many charges had to wait: a count that grows whenever the limiter held a transfer back.
    public var delayCount: Int { state.withLock { $0.delays } }

    /// Charges `count` received bytes. Returns the ticket to wait for and how long until it is
    /// served (zero when the bytes were within the allowance).
    public func charge(_ count: Int) -> (ticket: Int64, wait: Duration) {
        let now = clock()
        return state.withLock { state in
            state.refill(at: now, burst: burst)
            state.charged += Int64(count)
            let wait = state.wait(for: state.charged)
            if wait > .zero { state.delays += 1 }
            return (state.charged, wait)
        }
    }

    /// How long until a ticket is served, at the current rate; zero once it is.
    public func wait(for ticket: Int64) -> Duration {
        let now = clock()
        return state.withLock { state in
            state.refill(at: now, burst: burst)
            return state.wait(for: ticket)
        }
    }

    public var description: String {
        "BandwidthLimiter(\(limit.map { $0.description } ?? "unlimited"))"
    }

    public static func == (lhs: BandwidthLimiter, rhs: BandwidthLimiter) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// One transfer's standing with its limiters: the tickets of its last charge. A backend keeps
/// one per transfer, on the transfer's own thread.
public struct BandwidthAccount: Sendable {
    /// The limiters the transfer is under.
    public let limiters: [BandwidthLimiter]
    private var tickets: [Int64]

    /// Creates an account under `limiters` (the request's ``TransferRequest/bandwidthLimiters``).
    public init(_ limiters: [BandwidthLimiter]) {
        self.limiters = limiters
        tickets = Array(repeating: 0, count: limiters.count)
    }

    /// Whether any limiter applies.
    public var isLimited: Bool { !limiters.isEmpty }

    /// Charges `count` received bytes to every limiter; returns how long the transfer must wait
    /// before it receives more (zero: it need not).
    public mutating func charge(_ count: Int) -> Duration {
        var longest = Duration.zero
        for index in limiters.indices {
            let (ticket, wait) = limiters[index].charge(count)
            tickets[index] = ticket
            longest = max(longest, wait)
        }
        return longest
    }

    /// How long the transfer must still wait for the bytes it was charged, at the limiters'
    /// current rates; zero once it may receive again.
    public func remainingWait() -> Duration {
        var longest = Duration.zero
        for index in limiters.indices {
            longest = max(longest, limiters[index].wait(for: tickets[index]))
        }
        return longest
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
