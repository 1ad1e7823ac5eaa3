import PeregrineCore
import PeregrineTransport
import Synchronization

/// A sink that passes writes on to another sink and counts them.
final class CountingSink: TransferSink {
    private let target: any TransferSink
    private let counts = Locked<(bytes: Int64, writes: Int)>((0, 0))

    /// Wraps `target`.
    init(_ target: any TransferSink) {
        self.target = target
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        counts.withLock {
            $0.bytes += Int64(bytes.count)
            $0.writes += 1
        }
        try target.write(bytes, at: offset)
    }

    func flush() throws {
        try target.flush()
    }

    /// The bytes passed to ``write(_:at:)`` so far.
    var byteCount: Int64 { counts.withLock { $0.bytes } }

    /// The number of calls to ``write(_:at:)`` so far.
    var writeCount: Int { counts.withLock { $0.writes } }
}
