import PeregrineCore
import PeregrineTransport
import Synchronization

/// Runs one transfer through ``Transport/start(_:sink:events:)``, keeps every event it reports
/// and lets the event handler act on the transfer (cancel it) synchronously, on the backend's
/// thread, the moment an event arrives.
final class TransferMonitor: Sendable {
    private let transport: any Transport
    private let state = Locked<State>(State())

    private struct State {
        var id: TransferID?
        var cancelRequested = false
        var events: [TransferEvent] = []
    }

    private init(transport: any Transport) {
        self.transport = transport
    }

    /// Cancels the transfer; safe to call more than once and before ``Transport/start(_:sink:events:)``
    /// has returned (the cancel is then sent as soon as the transfer has an identifier).
    func cancel() {
        let id = state.withLock { state in
            state.cancelRequested = true
            return state.id
        }
        if let id { transport.cancel(id) }
    }

    private func started(_ id: TransferID) {
        let cancelNow = state.withLock { state in
            state.id = id
            return state.cancelRequested
        }
        if cancelNow { transport.cancel(id) }
    }

    private func record(_ event: TransferEvent) {
        state.withLock { $0.events.append(event) }
    }

    private var events: [TransferEvent] { state.withLock { $0.events } }

    /// Runs a transfer to its end and returns everything it reported.
    ///
    /// - Parameters:
    ///   - onEvent: called with each event on the backend's thread, after it was recorded.
    ///   - timeout: how long to await the completion event; the transfer is cancelled then.
    /// - Throws: ``TransferTimeout`` (with the events so far) when no completion arrived in time.
    static func run(
        _ request: TransferRequest,
        on transport: any Transport,
        sink: any TransferSink,
        timeout: Duration = .seconds(120),
        onEvent: (@Sendable (TransferEvent, TransferMonitor) -> Void)? = nil
    ) async throws(TransferTimeout) -> TransferRecord {
        let monitor = TransferMonitor(transport: transport)
        let (completions, continuation) = AsyncStream<Result<TransferSummary, TransportError>>.makeStream()
        let id = transport.start(request, sink: sink) { event in
            monitor.record(event)
            onEvent?(event, monitor)
            if case .completed(let result) = event {
                continuation.yield(result)
                continuation.finish()
            }
        }
        monitor.started(id)

        enum Outcome: Sendable {
            case completed(Result<TransferSummary, TransportError>)
            case timedOut
        }
        let outcome = await withTaskGroup(of: Outcome.self) { group in
            group.addTask {
                for await result in completions { return .completed(result) }
                return .timedOut
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .timedOut
            }
            let first = await group.next() ?? .timedOut
            group.cancelAll()
            return first
        }
        switch outcome {
        case .completed(let result):
            return TransferRecord(request: request, events: monitor.events, result: result)
        case .timedOut:
            transport.cancel(id)
            throw TransferTimeout(url: request.url.string, timeout: timeout, events: monitor.events)
        }
    }
}

/// A transfer did not complete within its time limit.
struct TransferTimeout: Error, CustomStringConvertible {
    /// The requested URL.
    var url: String
    /// The limit.
    var timeout: Duration
    /// What the transfer reported before the limit.
    var events: [TransferEvent]

    var description: String {
        "no completion event for \(url) within \(timeout); events so far: \(events.suffix(10))"
    }
}
