import PeregrineCore
import PeregrineTransport
import Synchronization

/// A transfer sink that keeps what it is given, and can be told to fail, to check what a
/// ``HashingSink`` passes on.
final class HashingSinkRecorder: TransferSink {
    struct Record: Sendable {
        var bytes: [UInt8] = []
        var writes: [(offset: Int64, count: Int)] = []
        var flushCount = 0
        var failAtWrite: Int?
    }

    let record = Locked(Record())

    init(failAtWrite: Int? = nil) {
        record.withLock { $0.failAtWrite = failAtWrite }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try record.withLock { record in
            if record.failAtWrite == record.writes.count {
                throw SinkWriteError(errno: 28, message: "no space left (test)")
            }
            record.writes.append((offset, bytes.count))
            let end = Int(offset) + bytes.count
            if record.bytes.count < end { record.bytes += [UInt8](repeating: 0, count: end - record.bytes.count) }
            record.bytes.replaceSubrange(Int(offset)..<end, with: bytes)
        }
    }

    func flush() throws {
        record.withLock { $0.flushCount += 1 }
    }

    var bytes: [UInt8] { record.withLock { $0.bytes } }
    var writeOffsets: [Int64] { record.withLock { $0.writes.map(\.offset) } }
    var flushCount: Int { record.withLock { $0.flushCount } }
}
