import Synchronization

/// Fans notifications out to the connected WebSocket clients, each through its own bounded
/// buffer: a slow client loses its oldest notifications, never slows the others.
final class NotificationHub: Sendable {
    private struct State {
        var next = 0
        var subscribers: [Int: AsyncStream<String>.Continuation] = [:]
        var closed = false
    }

    private let state = Mutex(State())
    private let buffer: Int

    init(buffer: Int) { self.buffer = buffer }

    /// A new subscriber's stream and its id; nil once closed or when `limit` clients are in.
    func subscribe(limit: Int) -> (id: Int, stream: AsyncStream<String>)? {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(buffer))
        let id: Int? = state.withLock { state in
            guard !state.closed, state.subscribers.count < limit else { return nil }
            state.next += 1
            state.subscribers[state.next] = continuation
            return state.next
        }
        guard let id else {
            continuation.finish()
            return nil
        }
        return (id, stream)
    }

    /// Removes a subscriber.
    func unsubscribe(_ id: Int) {
        state.withLock { $0.subscribers.removeValue(forKey: id) }?.finish()
    }

    /// Sends a text to every subscriber.
    func broadcast(_ text: String) {
        let continuations = state.withLock { Array($0.subscribers.values) }
        for continuation in continuations { continuation.yield(text) }
    }

    /// Ends every subscriber's stream, and refuses new ones; true the first time only.
    @discardableResult
    func close() -> Bool {
        let (first, continuations) = state.withLock { state in
            let first = !state.closed
            state.closed = true
            defer { state.subscribers = [:] }
            return (first, Array(state.subscribers.values))
        }
        for continuation in continuations { continuation.finish() }
        return first
    }
}
