import NIOCore
import NIOWebSocket
import PeregrineCore
import Synchronization

/// Fans notifications out to the connected WebSocket clients, written on their connections'
/// event loops: a notification costs at most one task per event loop, not one per client, and
/// what is sent while a loop is busy is written together.
///
/// A client whose connection holds more unsent bytes than its backlog (its channel is not
/// writable) loses the notifications sent meanwhile: a slow client never slows the others, and
/// what it costs the service is bounded. Answers to its own calls are not dropped: they wait.
///
/// The frames are written past the WebSocket handler of swift-websocket, so the service's
/// WebSocket configuration must not negotiate extensions (none is configured).
final class NotificationHub: Sendable {
    /// One WebSocket client.
    final class Subscriber: Sendable {
        let channel: any Channel
        /// Finished when the hub closes: the client's handler ends then (and sends its close frame).
        fileprivate let end: AsyncStream<Never>.Continuation
        /// False once the client's handler ends: nothing is written after its close frame.
        fileprivate let open = Atomic(true)

        fileprivate init(channel: any Channel, end: AsyncStream<Never>.Continuation) {
            self.channel = channel
            self.end = end
        }
    }

    /// The subscribers on one event loop, and the notifications not yet written to them: those
    /// sent while the loop is busy are written together, each connection flushed once.
    private final class Loop: Sendable {
        private struct Queue {
            var subscribers: [ObjectIdentifier: Subscriber] = [:]
            var frames: [WebSocketFrame] = []
            var scheduled = false
        }

        let loop: any EventLoop
        private let queue = Locked(Queue())
        /// The hub's count of notifications a client lost.
        private let dropped: DropCount

        init(_ loop: any EventLoop, dropped: DropCount) {
            self.loop = loop
            self.dropped = dropped
        }

        func add(_ subscriber: Subscriber) {
            queue.withLock { $0.subscribers[ObjectIdentifier(subscriber)] = subscriber }
        }

        /// Removes a subscriber; false if it was not there.
        func remove(_ subscriber: Subscriber) -> Bool {
            queue.withLock { $0.subscribers.removeValue(forKey: ObjectIdentifier(subscriber)) != nil }
        }

        /// Removes every subscriber, and returns them.
        func removeAll() -> [Subscriber] {
            queue.withLock { queue in
                defer { queue.subscribers = [:] }
                return Array(queue.subscribers.values)
            }
        }

        /// Queues a frame, and schedules the writing unless it is scheduled already.
        func enqueue(_ frame: WebSocketFrame) {
            let schedule = queue.withLock { queue in
                guard !queue.subscribers.isEmpty else { return false }
                queue.frames.append(frame)
                defer { queue.scheduled = true }
                return !queue.scheduled
            }
            if schedule { loop.execute { self.write() } }
        }

        /// On the loop: writes the queued frames to every subscriber with room for them.
        private func write() {
            let (frames, subscribers) = queue.withLock { queue in
                defer {
                    queue.frames = []
                    queue.scheduled = false
                }
                return (queue.frames, queue.subscribers)
            }
            for subscriber in subscribers.values where subscriber.open.load(ordering: .acquiring) {
                let channel = subscriber.channel
                var written = 0
                for frame in frames where channel.isWritable {
                    channel.write(frame, promise: nil)
                    written += 1
                }
                if written > 0 { channel.flush() }
                if written < frames.count { dropped.value.add(frames.count - written, ordering: .relaxed) }
            }
        }
    }

    private struct State {
        var loops: [ObjectIdentifier: Loop] = [:]
        var count = 0
        var closed = false
    }

    private let state = Locked(State())
    /// Notifications not written to a client because its backlog was full, since the start.
    private final class DropCount: Sendable {
        let value = Atomic<Int>(0)
    }
    private let droppedCount = DropCount()

    init() {}

    /// How many notifications clients lost so far (each client's loss counts).
    var droppedNotifications: Int { droppedCount.value.load(ordering: .relaxed) }

    /// The WebSocket clients subscribed now.
    var subscriberCount: Int { state.withLock { $0.count } }

    /// A new subscriber for a WebSocket `channel`, and a stream that ends when the hub closes;
    /// nil once closed or when `limit` clients are in.
    func subscribe(_ channel: any Channel, limit: Int) -> (subscriber: Subscriber, closing: AsyncStream<Never>)? {
        let (closing, end) = AsyncStream<Never>.makeStream()
        let subscriber = Subscriber(channel: channel, end: end)
        let eventLoop = channel.eventLoop
        // Added under the hub's lock: a close that comes meanwhile finds it and ends it.
        let added = state.withLock { state -> Bool in
            guard !state.closed, state.count < limit else { return false }
            state.count += 1
            let loop = state.loops[ObjectIdentifier(eventLoop)] ?? Loop(eventLoop, dropped: droppedCount)
            state.loops[ObjectIdentifier(eventLoop)] = loop
            loop.add(subscriber)
            return true
        }
        guard added else {
            end.finish()
            return nil
        }
        return (subscriber, closing)
    }

    /// Removes a subscriber; nothing is written to it from now on.
    func unsubscribe(_ subscriber: Subscriber) {
        subscriber.open.store(false, ordering: .releasing)
        let eventLoop = ObjectIdentifier(subscriber.channel.eventLoop)
        state.withLock { state in
            if state.loops[eventLoop]?.remove(subscriber) == true { state.count -= 1 }
        }
        subscriber.end.finish()
    }

    /// Sends a text message to every subscriber whose connection has room for it.
    func broadcast(_ text: String) {
        let loops = state.withLock { Array($0.loops.values) }
        guard !loops.isEmpty else { return }
        // One payload shared by every connection; the frame encoder writes each header apart.
        let frame = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text))
        for loop in loops { loop.enqueue(frame) }
    }

    /// Ends every subscriber's closing stream, and refuses new subscribers; true the first time only.
    @discardableResult
    func close() -> Bool {
        let (first, subscribers) = state.withLock { state in
            let first = !state.closed
            state.closed = true
            state.count = 0
            return (first, state.loops.values.flatMap { $0.removeAll() })
        }
        for subscriber in subscribers {
            subscriber.open.store(false, ordering: .releasing)
            subscriber.end.finish()
        }
        return first
    }
}
