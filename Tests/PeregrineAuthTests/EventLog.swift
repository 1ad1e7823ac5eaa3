import PeregrineCore
import PeregrineTransport
import Synchronization

/// Records a transfer's events and lets a test await its completion without sleeping.
final class EventLog: Sendable {
    private let recorded = Locked<[TransferEvent]>([])
    private let stream: AsyncStream<Result<TransferSummary, TransportError>>
    private let continuation: AsyncStream<Result<TransferSummary, TransportError>>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    /// The handler to pass to `Transport.start`.
    var handler: @Sendable (TransferEvent) -> Void {
        { [self] event in
            recorded.withLock { $0.append(event) }
            if case .completed(let result) = event { continuation.yield(result) }
        }
    }

    var events: [TransferEvent] { recorded.withLock { $0 } }

    /// The heads reported, in order.
    var heads: [ResponseHead] {
        events.compactMap { if case .head(let head) = $0 { head } else { nil } }
    }

    /// How many completion events were reported.
    var completionCount: Int {
        events.filter { if case .completed = $0 { true } else { false } }.count
    }

    /// Waits for the first completion event.
    func completion() async -> Result<TransferSummary, TransportError> {
        for await result in stream { return result }
        return .failure(TransportError(.cancelled, "the event log closed without a completion"))
    }
}

extension Result where Success == TransferSummary, Failure == TransportError {
    /// The error, or nil on success.
    var error: TransportError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    /// The summary, or nil on failure.
    var summary: TransferSummary? {
        if case .success(let summary) = self { return summary }
        return nil
    }
}

extension Transport {
    /// Starts `request` and waits for its completion; returns the result and the event log.
    func run(
        _ request: TransferRequest, sink: any TransferSink = MemorySink()
    ) async -> (Result<TransferSummary, TransportError>, EventLog) {
        let log = EventLog()
        _ = start(request, sink: sink, events: log.handler)
        return (await log.completion(), log)
    }
}
