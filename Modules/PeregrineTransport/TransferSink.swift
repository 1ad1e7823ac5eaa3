import PeregrineCore
import Synchronization

/// Where a transfer's body bytes go.
///
/// A backend calls a sink from its own thread, one call at a time, for one transfer at a time.
/// The bytes passed to ``write(_:at:)`` are valid only during the call.
public protocol TransferSink: AnyObject, Sendable {
    /// Writes bytes at a file offset. May keep them in a buffer until ``flush()``.
    ///
    /// - Throws: ``SinkWriteError`` (or any error) when the bytes cannot be stored; the transfer
    ///   then ends with ``TransportError/Code/writeFailed``.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws

    /// Writes out anything buffered. Called before a transfer reports success.
    func flush() throws
}

/// A sink's failure to store bytes.
public struct SinkWriteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The errno of the failed call (`ENOSPC` = 28 for a full disk).
    public var errno: Int32
    /// What failed.
    public var message: String

    /// Creates an error.
    public init(errno: Int32, message: String) {
        self.errno = errno
        self.message = message
    }

    public var description: String { message }
}

/// A sink that keeps the body in memory; for tests and small resources.
public final class MemorySink: TransferSink {
    private let storage = Locked<[UInt8]>([])
    private let limit: Int

    /// Creates a sink that refuses to hold more than `limit` bytes.
    public init(limit: Int = 64 << 20) { self.limit = limit }

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        guard bytes.count > 0 else { return }
        // errno 22: EINVAL.
        guard offset >= 0 else { throw SinkWriteError(errno: 22, message: "write at negative offset \(offset)") }
        try storage.withLock { storage in
            let end = Int(offset) + bytes.count
            guard end <= limit else {
                throw SinkWriteError(errno: 27, message: "memory sink limit of \(limit) bytes exceeded")  // EFBIG
            }
            if storage.count < end { storage.append(contentsOf: repeatElement(0, count: end - storage.count)) }
            storage.withUnsafeMutableBytes { target in
                target.baseAddress!.advanced(by: Int(offset)).copyMemory(
                    from: bytes.baseAddress!, byteCount: bytes.count)
            }
        }
    }

    public func flush() throws {}

    /// The bytes written so far.
    public var bytes: [UInt8] { storage.withLock { $0 } }
}

/// A sink that throws the bytes away and counts them.
public final class DiscardingSink: TransferSink {
    private let total = Locked<Int64>(0)

    /// Creates a sink.
    public init() {}

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        total.withLock { $0 += Int64(bytes.count) }
    }

    public func flush() throws {}

    /// The number of bytes written.
    public var byteCount: Int64 { total.withLock { $0 } }
}
