import PeregrineCore
import PeregrineTransport
import Synchronization

/// The sink of a conformance run: records what is written and every breach of the
/// Transport rules it can see (a gap between writes, a write before the head, while paused
/// or after a cancel, success without a flush after the last write).
public final class ConformanceSink: TransferSink {
    private struct State {
        var start: Int64?
        var bytes: [UInt8] = []
        var violations: [String] = []
        var headArrived = false
        var quietReason: String?
        var flushedAfterLastWrite = true
    }

    private let state = Locked(State())
    private let failure: (limit: Int64, errno: Int32)?

    /// Creates a sink; with `failingAfter`, writes beyond that many bytes store what fits and throw.
    public init(failingAfter limit: Int64? = nil, errno: Int32 = 28) {
        failure = limit.map { ($0, errno) }
    }

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try state.withLock { state in
            if !state.headArrived {
                state.violations.append("\(bytes.count) bytes written at \(offset) before the head")
            }
            if let reason = state.quietReason {
                state.violations.append("\(bytes.count) bytes written at \(offset) \(reason)")
            }
            let start = state.start ?? offset
            if state.start == nil { state.start = offset }
            let expectedOffset = start + Int64(state.bytes.count)
            if offset != expectedOffset {
                state.violations.append("write at \(offset), where \(expectedOffset) was next")
            }
            state.flushedAfterLastWrite = false
            if let failure, Int64(state.bytes.count) + Int64(bytes.count) > failure.limit {
                let fits = Int(max(0, failure.limit - Int64(state.bytes.count)))
                state.bytes.append(contentsOf: bytes.prefix(fits))
                throw SinkWriteError(
                    errno: failure.errno, message: "conformance sink full after \(failure.limit) bytes")
            }
            state.bytes.append(contentsOf: bytes)
        }
    }

    public func flush() throws {
        state.withLock { $0.flushedAfterLastWrite = true }
    }

    /// Notes that the head event arrived: writes are allowed from now on.
    public func noteHead() { state.withLock { $0.headArrived = true } }

    /// Notes that no write may come from now on, and why ("while paused", "after cancel").
    public func forbidWrites(_ reason: String) { state.withLock { $0.quietReason = reason } }

    /// Allows writes again (after a resume).
    public func allowWrites() { state.withLock { $0.quietReason = nil } }

    /// Whether ``flush()`` was called after the last write (or nothing was written).
    public var isFlushed: Bool { state.withLock { $0.flushedAfterLastWrite } }

    /// What the sink holds.
    public var record: ConformanceSinkRecord {
        state.withLock { ConformanceSinkRecord(start: $0.start, bytes: $0.bytes) }
    }

    /// The breaches seen.
    public var violations: [String] { state.withLock { $0.violations } }
}
