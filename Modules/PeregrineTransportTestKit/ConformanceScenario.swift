import PeregrineMockTransport
import PeregrineTransport

/// One script of the Transport conformance suite: routes, a request, what the event handler
/// does, and the trace every backend must produce.
public struct ConformanceScenario: Sendable, CustomStringConvertible {
    /// What the event handler does once the body reaches a byte count.
    public enum Action: Sendable, Hashable {
        /// Cancel the transfer from inside the handler.
        case cancel(atBytes: Int64)
        /// Pause from inside the handler; the runner resumes from another task once paused.
        case pauseAndResume(atBytes: Int64)
        /// Rule 12: the runner adds a `BandwidthLimiter` whose clock never advances, so the
        /// transfer owes time after its first chunk and must be held back. Once the backend
        /// has asked the limiter again `rechecks` times, and again `rechecks` times more with
        /// nothing received in between, the runner lifts the limit; the transfer must then
        /// complete, every byte written having been charged.
        case frozenLimiter(rechecks: Int)
    }

    /// The sink the transfer writes to.
    public enum Sink: Sendable, Hashable {
        /// Records everything.
        case recording
        /// Records the first `afterBytes` bytes, then throws `SinkWriteError` with `errno`.
        case failing(afterBytes: Int64, errno: Int32)
    }

    /// A short name, e.g. "redirect chain of 3".
    public var name: String
    /// Whether the scenario needs an https origin (``ConformanceBases/secure``).
    public var requiresTLS: Bool
    /// Sets the routes up on an empty server.
    public var setup: @Sendable (MockServer, ConformanceBases) -> Void
    /// Builds the request.
    public var request: @Sendable (ConformanceBases) -> TransferRequest
    /// What the handler does during the body, if anything.
    public var action: Action?
    /// The sink.
    public var sink: Sink
    /// The trace every backend must produce.
    public var expected: ConformanceExpectation

    /// Creates a scenario.
    public init(
        _ name: String,
        requiresTLS: Bool = false,
        setup: @escaping @Sendable (MockServer, ConformanceBases) -> Void,
        request: @escaping @Sendable (ConformanceBases) -> TransferRequest,
        action: Action? = nil,
        sink: Sink = .recording,
        expected: ConformanceExpectation
    ) {
        self.name = name
        self.requiresTLS = requiresTLS
        self.setup = setup
        self.request = request
        self.action = action
        self.sink = sink
        self.expected = expected
    }

    public var description: String { name }
}
