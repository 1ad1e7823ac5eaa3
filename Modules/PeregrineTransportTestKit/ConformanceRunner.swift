import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs conformance scenarios on a transport and returns their traces.
public enum ConformanceRunner {
    /// Runs `scenario` on `transport`, whose requests reach `routes` at `bases`.
    ///
    /// Empties `routes`, sets the scenario's routes up, starts the request and waits (at most
    /// `timeout`) for its completion. A scenario with a pause action is resumed from this task
    /// as soon as the handler has paused it.
    public static func run(
        _ scenario: ConformanceScenario,
        on transport: any Transport,
        routes: MockServer,
        bases: ConformanceBases,
        timeout: Duration = .seconds(30)
    ) async -> ConformanceTrace {
        routes.removeAllRoutes()
        routes.clearRequests()
        scenario.setup(routes, bases)
        var request = scenario.request(bases)
        var frozen: FrozenLimiter?
        if case .frozenLimiter = scenario.action {
            let limiter = FrozenLimiter()
            request.bandwidthLimiters.append(limiter.limiter)
            frozen = limiter
        }
        let sink: ConformanceSink =
            switch scenario.sink {
            case .recording: ConformanceSink()
            case .failing(let limit, let errno): ConformanceSink(failingAfter: limit, errno: errno)
            }
        let recorder = EventRecorder(bases: bases)
        let box = TransferIDBox()
        let (signals, continuation) = AsyncStream<Signal>.makeStream()
        let action = scenario.action

        let id = transport.start(request, sink: sink) { event in
            recorder.record(event)
            switch event {
            case .head:
                sink.noteHead()
            case .progress(let progress):
                guard let action, recorder.takeActionOnce(atBytes: progress.receivedBytes, action) else { break }
                let id = box.wait()
                switch action {
                case .cancel:
                    transport.cancel(id)
                    sink.forbidWrites("after the cancel")
                case .pauseAndResume:
                    transport.pause(id)
                    sink.forbidWrites("while paused")
                    continuation.yield(.paused)
                case .frozenLimiter:
                    break  // its own task lifts the limit (below)
                }
            case .completed:
                continuation.yield(.completed)
                continuation.finish()
            case .redirected:
                break
            }
        }
        box.set(id)
        // Rule 12's lifter runs on a thread of its own: the cooperative pool may be busy with
        // other tests, and the scenario must not depend on it.
        var lifter: LoopbackThread?
        if let frozen, case .frozenLimiter(let rechecks) = action {
            lifter = try? LoopbackThread.spawn {
                frozen.holdThenLift(rechecks: rechecks, sink: sink, completed: { recorder.isCompleted })
            }
            if lifter == nil { frozen.lift() }
        }

        let completed = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await signal in signals {
                    switch signal {
                    case .paused:
                        sink.allowWrites()
                        transport.resume(id)
                    case .completed:
                        return true
                    }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }

        lifter?.join()
        var violations = sink.violations + recorder.violations
        if let frozen { violations += frozen.violations(written: sink.record.count, succeeded: recorder.succeeded) }
        if !completed {
            transport.cancel(id)
            violations.append("no completion within \(timeout)")
        }
        if recorder.succeeded, !sink.isFlushed {
            violations.append("success reported without a flush after the last write")
        }
        return ConformanceTrace(
            events: recorder.events,
            requests: routes.requests.map { ConformanceTrace.describe($0, bases: bases) },
            sink: sink.record,
            violations: violations)
    }

    private enum Signal: Sendable {
        case paused
        case completed
    }
}

/// The events of one run, normalised, and the ordering breaches among them.
private final class EventRecorder: Sendable {
    private struct State {
        var events: [String] = []
        var violations: [String] = []
        var completed = false
        var succeeded = false
        var headSeen = false
        var lastProgress: Int64 = 0
        var actionTaken = false
    }

    private let state = Locked(State())
    private let bases: ConformanceBases

    init(bases: ConformanceBases) { self.bases = bases }

    func record(_ event: TransferEvent) {
        state.withLock { state in
            if state.completed { state.violations.append("event after the completion: \(event)") }
            switch event {
            case .head:
                if state.headSeen { state.violations.append("a second head") }
                state.headSeen = true
            case .progress(let progress):
                if !state.headSeen { state.violations.append("progress before the head") }
                if progress.receivedBytes < state.lastProgress {
                    state.violations.append(
                        "progress went back from \(state.lastProgress) to \(progress.receivedBytes)")
                }
                state.lastProgress = progress.receivedBytes
            case .completed(let result):
                state.completed = true
                if case .success = result { state.succeeded = true }
            case .redirected:
                if state.headSeen { state.violations.append("a redirect after the head") }
            }
            if let text = ConformanceTrace.describe(event, bases: bases) { state.events.append(text) }
        }
    }

    /// True the first time the body reaches the action's byte count.
    func takeActionOnce(atBytes bytes: Int64, _ action: ConformanceScenario.Action) -> Bool {
        let threshold: Int64 =
            switch action {
            case .cancel(let count), .pauseAndResume(let count): count
            case .frozenLimiter: Int64.max
            }
        return state.withLock { state in
            guard !state.actionTaken, bytes >= threshold else { return false }
            state.actionTaken = true
            return true
        }
    }

    var events: [String] { state.withLock { $0.events } }
    var violations: [String] { state.withLock { $0.violations } }
    var succeeded: Bool { state.withLock { $0.succeeded } }
    var isCompleted: Bool { state.withLock { $0.completed } }
}

/// Rule 12's limiter: a limit on a clock that stands still, so that a transfer charged to it
/// owes time after its first chunk, and a count of the clock's readings — one each time the
/// backend asks whether the transfer may go on.
private final class FrozenLimiter: Sendable {
    private struct State {
        var lifted = false
        var violations: [String] = []
    }

    /// The clock's readings.
    private final class Readings: Sendable {
        let count = Atomic<Int>(0)
    }

    private let state = Locked(State())
    private let clockReadings = Readings()
    let limiter: BandwidthLimiter

    init() {
        let readings = clockReadings
        limiter = BandwidthLimiter(
            try! SpeedLimit(bytesPerSecond: 64 << 10),
            clock: {
                readings.count.add(1, ordering: .relaxed)
                return .zero
            })
    }

    private var readings: Int { clockReadings.count.load(ordering: .relaxed) }

    /// Waits until the backend was held back and asked `rechecks` times, checks that nothing
    /// arrived during `rechecks` more, then lifts the limit. Returns early when the transfer
    /// completed (a backend that ignores its limiter), leaving that to ``violations(written:succeeded:)``.
    func holdThenLift(rechecks: Int, sink: ConformanceSink, completed: () -> Bool) {
        // Gives up after a minute, well past the runner's timeout, so the thread always ends.
        var polls = 0
        func waitUntil(_ condition: () -> Bool) -> Bool {
            while !condition() {
                polls += 1
                if completed() || polls > 30_000 { return false }
                usleep(2_000)
            }
            return true
        }
        // On every way out the limit goes, so that a transfer is never left hanging; only the
        // way through the checks counts as lifted after holding the transfer back.
        var held = false
        defer { lift(afterHolding: held) }
        guard waitUntil({ limiter.delayCount >= 1 }) else { return }
        var mark = readings
        guard waitUntil({ readings >= mark + rechecks }) else { return }
        let before = (sink.record.count, limiter.chargedBytes)
        mark = readings
        guard waitUntil({ readings >= mark + rechecks }) else { return }
        let after = (sink.record.count, limiter.chargedBytes)
        held = true
        if before != after {
            state.withLock {
                $0.violations.append(
                    "received while its limiter held it back: \(before.0) then \(after.0) bytes written, "
                        + "\(before.1) then \(after.1) charged")
            }
        }
    }

    /// Lifts the limit, so that the transfer can complete.
    func lift(afterHolding held: Bool = false) {
        if held { state.withLock { $0.lifted = true } }
        limiter.limit = nil
    }

    /// Rule 12's breaches, once the transfer ended with `written` bytes in its sink.
    func violations(written: Int64, succeeded: Bool) -> [String] {
        var violations = state.withLock { $0.violations }
        if succeeded, !state.withLock({ $0.lifted }) {
            violations.append("completed while its limiter held it back (\(limiter.delayCount) charges had to wait)")
        }
        if limiter.chargedBytes != written {
            violations.append("\(written) bytes written but \(limiter.chargedBytes) charged to the limiter")
        }
        return violations
    }
}

/// The transfer's identifier, for a handler that may run before `start` has returned it.
private final class TransferIDBox: Sendable {
    private let value = Locked<TransferID?>(nil)

    func set(_ id: TransferID) { value.withLock { $0 = id } }

    /// The identifier; spins (yielding the processor) until `set` was called, which
    /// happens as soon as `start` returns.
    func wait() -> TransferID {
        while true {
            if let id = value.withLock({ $0 }) { return id }
            sched_yield()
        }
    }
}
