import Dispatch
import HeapModule
import PeregrineCore
import PeregrineTransport
import Synchronization

/// An in-memory `Transport` that serves a ``MockServer``'s routes on a virtual clock: no
/// sockets, no real sleeping, the same events for the same script every time.
///
/// A discrete-event simulation: each transfer is a sequence of steps (send a request, receive
/// the head, receive one chunk of at most ``chunkSize`` body bytes, complete), each due at a
/// virtual time that route latency and throughput (and the request's
/// `maxReceiveBytesPerSecond`, and its `bandwidthLimiters`, which should count on this
/// transport's ``bandwidthClock``) push forward. Steps run one at a time in order of due time, then
/// of scheduling; each delivers at most one event. Steps at the same time keep the order in
/// which they were scheduled, so several transfers interleave deterministically.
///
/// - ``Mode/automatic``: the transport's own serial executor runs steps as soon as they are
///   scheduled, jumping the clock to each one's time: transfers complete at once in real time.
/// - ``Mode/manual``: nothing happens until ``advance(by:)``, ``advance(to:)``,
///   ``runUntilIdle()`` or ``runNextStep()``, which run the due steps synchronously on the
///   calling thread and return after their events were delivered, like swift-nio's
///   `EmbeddedChannel`.
///
/// It meets every implementation requirement of `Transport`: the credentials check before any
/// request, redirects through `RedirectPolicy`, each hop's headers from
/// `TransferRequest.headersToSend(to:)` (which is what ``MockServer/requests`` records), the
/// head before the body, nothing written for a non-2xx or a range not honoured, writes at
/// `range.start + bytes so far`, `flush()` before success, length checks, sink errors with
/// their errno, serial events ending with one completion, and ``pause(_:)``, ``resume(_:)``,
/// ``cancel(_:)`` from any thread, the event handler included. The too-slow rule of the
/// request's timeouts applies to latency, slow throughput and stalls, in virtual time.
///
/// The URL's host does not matter (use e.g. `http://mock.test`); a path without a route
/// answers 404.
public final class MockTransport: Transport {
    /// Who advances the virtual clock.
    public enum Mode: Sendable, Hashable {
        /// The transport's executor runs every step at once, jumping the clock.
        case automatic
        /// The caller advances the clock with ``MockTransport/advance(by:)`` and friends.
        case manual
    }

    /// The server whose routes are served and whose log records the requests.
    public let server: MockServer
    /// Who advances the clock.
    public let mode: Mode
    /// The most body bytes delivered (and written to the sink) in one step.
    public let chunkSize: Int

    private struct Slot {
        let transfer: MockTransfer
        var due: MockInstant?
        var order: UInt64 = 0
        var heldDue: MockInstant?
        var isPaused = false
        var wasPaused = false
        var isCancelled = false
        var isRunning = false
    }

    private struct Timer {
        let due: MockInstant
        let work: @Sendable () -> Void
    }

    /// A step or timer in the queue of what is due, ordered by time, then by scheduling. A
    /// step's entry is stale once its slot was scheduled again, paused, run or removed (its
    /// slot's `order` differs, or its `due` is nil): stale entries are dropped when they come
    /// up, so nothing is searched for or removed from the middle of the queue.
    private struct Due: Comparable {
        let due: MockInstant
        let order: UInt64
        /// The slot's key; nil for a timer (its work is in `State.timers` under `order`).
        let slot: UInt64?

        static func < (lhs: Due, rhs: Due) -> Bool { (lhs.due, lhs.order) < (rhs.due, rhs.order) }
        static func == (lhs: Due, rhs: Due) -> Bool { lhs.order == rhs.order }
    }

    private struct State {
        var now = MockInstant.zero
        var nextID: UInt64 = 1
        var nextOrder: UInt64 = 0
        var slots: [UInt64: Slot] = [:]
        /// Timers by their order in `queue`.
        var timers: [UInt64: Timer] = [:]
        var queue = Heap<Due>()
        var isStepping = false

        mutating func schedule(_ key: UInt64, at time: MockInstant) {
            let due = max(time, now)
            slots[key]!.due = due
            slots[key]!.order = nextOrder
            queue.insert(Due(due: due, order: nextOrder, slot: key))
            nextOrder += 1
        }

        mutating func addTimer(at due: MockInstant, _ work: @escaping @Sendable () -> Void) {
            timers[nextOrder] = Timer(due: due, work: work)
            queue.insert(Due(due: due, order: nextOrder, slot: nil))
            nextOrder += 1
        }

        func isCurrent(_ entry: Due) -> Bool {
            guard let key = entry.slot else { return true }
            guard let slot = slots[key] else { return false }
            return slot.order == entry.order && slot.due != nil
        }

        /// The first current entry, dropping the stale ones before it.
        mutating func first() -> Due? {
            while let entry = queue.min {
                if isCurrent(entry) { return entry }
                queue.removeMin()
            }
            return nil
        }
    }

    private let state = Locked(State())
    private let executor = DispatchQueue(label: "Peregrine.MockTransport")

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - server: the routes to serve; a new empty server by default.
    ///   - mode: ``Mode/automatic`` (the default) or ``Mode/manual``.
    ///   - chunkSize: the most body bytes per step; 64 KiB by default.
    public init(server: MockServer = MockServer(), mode: Mode = .automatic, chunkSize: Int = 64 << 10) {
        precondition(chunkSize > 0, "a chunk holds at least one byte")
        self.server = server
        self.mode = mode
        self.chunkSize = chunkSize
    }

    /// The current virtual time. During an event handler: the time of that event.
    public var now: MockInstant { state.withLock { $0.now } }

    /// The virtual clock as a `BandwidthLimiter` reads it: limiters shared by this transport's
    /// transfers count in virtual time when made with it.
    public var bandwidthClock: BandwidthLimiter.Clock { { [self] in now.offset } }

    /// The transfers that have not completed yet.
    public var activeTransfers: [TransferID] {
        state.withLock { $0.slots.keys.sorted().map(TransferID.init(rawValue:)) }
    }

    /// When the next step (or timer) is due, or nil when nothing is scheduled (all done, paused
    /// or stalled).
    public var nextStepTime: MockInstant? {
        state.withLock { $0.first()?.due }
    }

    /// Runs `work` once `delay` has passed on the virtual clock, in order with the transfers'
    /// steps (at the same time, after those scheduled before it): the scheduler of an engine
    /// clock in tests (`EngineClock(now:date:schedule:)`), so that waiting retries take no real
    /// time. In ``Mode/manual`` it runs within ``advance(by:)`` and friends.
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        let kick = state.withLock { state in
            state.addTimer(at: state.now.advanced(by: max(delay, .zero)), work)
            return claimExecutor(&state)
        }
        if kick { runOnExecutor() }
    }

    // MARK: Transport

    public func start(
        _ request: TransferRequest, sink: any TransferSink, events: @escaping @Sendable (TransferEvent) -> Void
    ) -> TransferID {
        let (id, kick) = state.withLock { state in
            let id = TransferID(rawValue: state.nextID)
            state.nextID += 1
            let transfer = MockTransfer(
                id: id, request: request, sink: sink, handler: events, server: server, chunkSize: chunkSize)
            state.slots[id.rawValue] = Slot(transfer: transfer)
            state.schedule(id.rawValue, at: state.now)
            return (id, claimExecutor(&state))
        }
        if kick { runOnExecutor() }
        return id
    }

    public func pause(_ id: TransferID) {
        state.withLock { state in
            guard var slot = state.slots[id.rawValue], !slot.isCancelled, !slot.isPaused else { return }
            slot.isPaused = true
            slot.wasPaused = true
            if let due = slot.due {
                slot.heldDue = due
                slot.due = nil
            }
            state.slots[id.rawValue] = slot
        }
    }

    public func resume(_ id: TransferID) {
        let kick = state.withLock { state in
            guard var slot = state.slots[id.rawValue], slot.isPaused else { return false }
            slot.isPaused = false
            let held = slot.heldDue
            slot.heldDue = nil
            state.slots[id.rawValue] = slot
            if let held { state.schedule(id.rawValue, at: held) }
            return claimExecutor(&state)
        }
        if kick { runOnExecutor() }
    }

    public func cancel(_ id: TransferID) {
        let kick = state.withLock { state in
            guard var slot = state.slots[id.rawValue], !slot.isCancelled else { return false }
            slot.isCancelled = true
            slot.isPaused = false
            slot.heldDue = nil
            state.slots[id.rawValue] = slot
            // A running step sees the flag when it ends and schedules the completion then.
            if !slot.isRunning { state.schedule(id.rawValue, at: state.now) }
            return claimExecutor(&state)
        }
        if kick { runOnExecutor() }
    }

    // MARK: Manual stepping

    /// Runs every step due within `duration` from ``now``, in order, then sets the clock to
    /// ``now`` + `duration`. Returns after the events were delivered, on this thread.
    ///
    /// - Precondition: the mode is ``Mode/manual``; not called from an event handler or from
    ///   two threads at once.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "time only moves forward")
        advance(to: now.advanced(by: duration))
    }

    /// Runs every step due at or before `instant`, in order, then sets the clock to `instant`
    /// (or leaves it where it is when that is later). Returns after the events were delivered.
    ///
    /// - Precondition: as for ``advance(by:)``.
    public func advance(to instant: MockInstant) {
        beginStepping()
        while runStep(notAfter: instant) {}
        endStepping(movingClockTo: instant)
    }

    /// Runs steps, jumping the clock to each one's time, until none is scheduled: every
    /// transfer has completed, is paused, or waits on a stalled server without a too-slow rule.
    ///
    /// - Precondition: as for ``advance(by:)``.
    public func runUntilIdle() {
        beginStepping()
        while runStep(notAfter: nil) {}
        endStepping(movingClockTo: nil)
    }

    /// Runs the next scheduled step, if any, jumping the clock to its time; it delivers at most
    /// one event. Returns whether a step ran.
    ///
    /// - Precondition: as for ``advance(by:)``.
    @discardableResult
    public func runNextStep() -> Bool {
        beginStepping()
        let ran = runStep(notAfter: nil)
        endStepping(movingClockTo: nil)
        return ran
    }

    // MARK: Stepping

    private func beginStepping() {
        precondition(mode == .manual, "only a manual MockTransport is advanced by hand")
        state.withLock { state in
            precondition(
                !state.isStepping,
                "MockTransport stepped from an event handler or from two threads at once")
            state.isStepping = true
        }
    }

    private func endStepping(movingClockTo instant: MockInstant?) {
        state.withLock { state in
            if let instant { state.now = max(state.now, instant) }
            state.isStepping = false
        }
    }

    /// Marks the executor busy when steps are due and it is idle; true when the caller must start it.
    private func claimExecutor(_ state: inout State) -> Bool {
        guard mode == .automatic, !state.isStepping, !state.queue.isEmpty else {
            return false
        }
        state.isStepping = true
        return true
    }

    private func runOnExecutor() {
        executor.async { [self] in
            while runStep(notAfter: nil, releasingExecutorWhenIdle: true) {}
        }
    }

    /// Runs the earliest due step (not after `limit`); false when there is none.
    private func runStep(notAfter limit: MockInstant?, releasingExecutorWhenIdle: Bool = false) -> Bool {
        enum Picked {
            case step(UInt64, MockTransfer, MockTransfer.Context)
            case timer(@Sendable () -> Void)
        }
        let picked: Picked? = state.withLock { state in
            guard let first = state.first(), limit.map({ first.due <= $0 }) ?? true else {
                if releasingExecutorWhenIdle { state.isStepping = false }
                return nil
            }
            state.queue.removeMin()
            state.now = max(state.now, first.due)
            guard let key = first.slot else {
                return .timer(state.timers.removeValue(forKey: first.order)!.work)
            }
            var slot = state.slots[key]!
            slot.due = nil
            slot.isRunning = true
            let context = MockTransfer.Context(
                now: state.now, isCancelled: slot.isCancelled, wasPaused: slot.wasPaused,
                isCancelledNow: { [self] in self.state.withLock { $0.slots[key]?.isCancelled ?? true } })
            slot.wasPaused = false
            state.slots[key] = slot
            return .step(key, slot.transfer, context)
        }
        let key: UInt64
        let transfer: MockTransfer
        let context: MockTransfer.Context
        switch picked {
        case nil: return false
        case .timer(let work):
            work()
            return true
        case .step(let pickedKey, let pickedTransfer, let pickedContext):
            (key, transfer, context) = (pickedKey, pickedTransfer, pickedContext)
        }
        let outcome = transfer.step(context)
        state.withLock { state in
            guard var slot = state.slots[key] else { return }
            slot.isRunning = false
            state.slots[key] = slot
            switch outcome {
            case .finished:
                state.slots[key] = nil
            case .next(let time):
                if slot.isCancelled {
                    state.schedule(key, at: state.now)
                } else if slot.isPaused {
                    state.slots[key]!.heldDue = time
                } else {
                    state.schedule(key, at: time)
                }
            case .waiting:
                if slot.isCancelled { state.schedule(key, at: state.now) }
            }
        }
        return true
    }
}
