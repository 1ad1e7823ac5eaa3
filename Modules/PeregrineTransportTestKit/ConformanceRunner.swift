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
        let request = scenario.request(bases)
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
                }
            case .completed:
                continuation.yield(.completed)
                continuation.finish()
            case .redirected:
                break
            }
        }
        box.set(id)

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

        var violations = sink.violations + recorder.violations
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

    private let state = Mutex(State())
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
}

/// The transfer's identifier, for a handler that may run before `start` has returned it.
private final class TransferIDBox: Sendable {
    private let value = Mutex<TransferID?>(nil)

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
