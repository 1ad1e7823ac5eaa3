import PeregrineCore
import PeregrineTransport
import Synchronization

/// Records a transfer's events and lets a test await its completion without sleeping.
final class TransferRecorder: Sendable {
    private let recorded = Locked<[TransferEvent]>([])
    private let stream: AsyncStream<Result<TransferSummary, TransportError>>
    private let continuation: AsyncStream<Result<TransferSummary, TransportError>>.Continuation
    /// Runs on the transport's thread for every event, after it was recorded.
    let onEvent: @Sendable (TransferEvent) -> Void

    init(onEvent: @escaping @Sendable (TransferEvent) -> Void = { _ in }) {
        (stream, continuation) = AsyncStream.makeStream()
        self.onEvent = onEvent
    }

    /// The handler to pass to `Transport.start`.
    var handler: @Sendable (TransferEvent) -> Void {
        { [self] event in
            recorded.withLock { $0.append(event) }
            onEvent(event)
            if case .completed(let result) = event {
                continuation.yield(result)
                continuation.finish()
            }
        }
    }

    var events: [TransferEvent] { recorded.withLock { $0 } }

    /// Waits for the completion event.
    func completion() async -> Result<TransferSummary, TransportError>? {
        for await result in stream { return result }
        return nil
    }
}

extension Result where Failure == TransportError {
    /// The error's code, or nil on success.
    var errorCode: TransportError.Code? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
