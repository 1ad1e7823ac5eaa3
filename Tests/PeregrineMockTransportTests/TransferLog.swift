import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Synchronization

/// Records a transfer's events with the virtual time each arrived at, and can act on them.
final class TransferLog: Sendable {
    struct Entry: Sendable, Hashable, CustomStringConvertible {
        var time: MockInstant
        var event: TransferEvent
        var description: String { "\(time) \(event)" }
    }

    private let entries = Locked<[Entry]>([])
    private let transport: MockTransport
    private let reaction: (@Sendable (TransferEvent, MockTransport) -> Void)?

    /// A log for transfers of `transport`; `reaction` runs inside the handler after recording.
    init(_ transport: MockTransport, reaction: (@Sendable (TransferEvent, MockTransport) -> Void)? = nil) {
        self.transport = transport
        self.reaction = reaction
    }

    var handler: @Sendable (TransferEvent) -> Void {
        { [self] event in
            let time = transport.now
            entries.withLock { $0.append(Entry(time: time, event: event)) }
            reaction?(event, transport)
        }
    }

    var all: [Entry] { entries.withLock { $0 } }
    var events: [TransferEvent] { all.map(\.event) }

    /// The events other than progress.
    var milestones: [TransferEvent] {
        events.filter {
            if case .progress = $0 { return false }
            return true
        }
    }

    var progress: [TransferProgress] {
        events.compactMap {
            if case .progress(let value) = $0 { return value }
            return nil
        }
    }

    var head: ResponseHead? {
        events.lazy.compactMap {
            if case .head(let head) = $0 { return head }
            return nil
        }.first
    }

    var result: Result<TransferSummary, TransportError>? {
        events.lazy.compactMap {
            if case .completed(let result) = $0 { return result }
            return nil
        }.first
    }

    var completionCount: Int {
        events.count {
            if case .completed = $0 { return true }
            return false
        }
    }

    /// The error the transfer failed with, if it did.
    var error: TransportError? {
        if case .failure(let error) = result { return error }
        return nil
    }

    /// The summary of a successful transfer.
    var summary: TransferSummary? {
        if case .success(let summary) = result { return summary }
        return nil
    }

    /// The time of the first event matching `predicate`.
    func time(of predicate: (TransferEvent) -> Bool) -> MockInstant? {
        all.first { predicate($0.event) }?.time
    }
}

extension TransferEvent {
    var isHead: Bool {
        if case .head = self { return true }
        return false
    }
    var isCompleted: Bool {
        if case .completed = self { return true }
        return false
    }
}

/// A sink that records each write's offset and length besides the bytes.
final class RecordingSink: TransferSink {
    private struct State {
        var bytes: [UInt8] = []
        var writes: [(offset: Int64, count: Int)] = []
        var flushes = 0
    }
    private let state = Locked(State())
    private let failure: SinkWriteError?

    init(failingWith failure: SinkWriteError? = nil) { self.failure = failure }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        if let failure { throw failure }
        state.withLock { state in
            state.writes.append((offset, bytes.count))
            state.bytes.append(contentsOf: bytes)
        }
    }

    func flush() throws { state.withLock { $0.flushes += 1 } }

    var bytes: [UInt8] { state.withLock { $0.bytes } }
    var offsets: [Int64] { state.withLock { $0.writes.map(\.offset) } }
    var writeSizes: [Int] { state.withLock { $0.writes.map(\.count) } }
    var flushCount: Int { state.withLock { $0.flushes } }
}

/// A sink whose flush fails.
final class FailingFlushSink: TransferSink {
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {}
    func flush() throws { throw SinkWriteError(errno: 5, message: "EIO on flush") }
}

extension Duration {
    /// Seconds as a `Double`, for readable expectations.
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
