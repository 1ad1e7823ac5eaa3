import Synchronization

/// Hands every event to each live subscriber's stream, in the order they were yielded.
final class DownloadManagerEventBroadcaster: Sendable {
    private struct State {
        var next: UInt64 = 0
        var continuations: [UInt64: AsyncStream<DownloadManagerEvent>.Continuation] = [:]
    }

    private let state = Mutex(State())

    func subscribe() -> AsyncStream<DownloadManagerEvent> {
        let (stream, continuation) = AsyncStream<DownloadManagerEvent>.makeStream()
        let id = state.withLock { state -> UInt64 in
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ events: [DownloadManagerEvent]) {
        guard !events.isEmpty else { return }
        state.withLock { state in
            for continuation in state.continuations.values {
                for event in events { continuation.yield(event) }
            }
        }
    }
}
