#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A sink that writes to a file with `pwrite`, batching small writes into one buffer.
///
/// Writes at contiguous offsets collect in a buffer allocated once (1 MiB by default) and go
/// to the file in one `pwrite` when it fills, when an offset jumps, or on ``flush()``; a write
/// at least as large as the buffer, arriving when the buffer is empty, goes straight to the
/// file without a copy. Nothing is allocated per write.
///
/// Thread safety: a backend calls a sink from one thread at a time; ``synchronize()`` and
/// ``close()`` must not overlap those calls (call them after the transfer completed).
public final class FileSink: TransferSink, @unchecked Sendable {
    /// How to open the file.
    public enum Mode: Sendable {
        /// Create the file, or cut an existing one to zero length.
        case truncate
        /// Create the file if needed and keep what it holds (to resume into it).
        case keepExisting
    }

    /// The file's path.
    public let path: String
    private var descriptor: Int32
    private let buffer: UnsafeMutableRawBufferPointer
    private var bufferedCount = 0
    private var bufferStart: Int64 = 0
    private var highestOffset: Int64 = 0

    /// Opens (or creates, mode 0644) the file at `path`.
    ///
    /// - Throws: ``SinkWriteError`` with the errno of `open`.
    public init(path: String, mode: Mode = .truncate, bufferCapacity: Int = 1 << 20) throws(SinkWriteError) {
        var flags = O_WRONLY | O_CREAT | O_CLOEXEC
        if case .truncate = mode { flags |= O_TRUNC }
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else {
            let code = errno
            throw SinkWriteError(errno: code, message: "cannot open \(path): \(String(cString: strerror(code)))")
        }
        self.path = path
        descriptor = fd
        buffer = .allocate(byteCount: max(bufferCapacity, 4096), alignment: 4096)
    }

    deinit {
        if descriptor >= 0 { _ = systemClose(descriptor) }
        buffer.deallocate()
    }

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        guard bytes.count > 0 else { return }
        if bufferedCount > 0, offset != bufferStart + Int64(bufferedCount) || bufferedCount + bytes.count > buffer.count
        {
            try writeBuffer()
        }
        if bufferedCount == 0, bytes.count >= buffer.count {
            try writeAll(bytes, at: offset)
            return
        }
        if bufferedCount == 0 { bufferStart = offset }
        buffer.baseAddress!.advanced(by: bufferedCount).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        bufferedCount += bytes.count
    }

    public func flush() throws {
        try writeBuffer()
    }

    /// Flushes and `fsync`s the file, and returns the end of the highest write: every byte before
    /// it that was written is now on stable storage.
    @discardableResult
    public func synchronize() throws(SinkWriteError) -> Int64 {
        try writeBuffer()
        guard fsync(descriptor) == 0 else { throw lastError("fsync") }
        return highestOffset
    }

    /// Flushes and closes the file. Further writes fail with `EBADF`.
    public func close() throws(SinkWriteError) {
        guard descriptor >= 0 else { return }
        defer {
            _ = systemClose(descriptor)
            descriptor = -1
        }
        try writeBuffer()
    }

    private func writeBuffer() throws(SinkWriteError) {
        guard bufferedCount > 0 else { return }
        let count = bufferedCount
        bufferedCount = 0
        try writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), at: bufferStart)
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SinkWriteError) {
        var done = 0
        while done < bytes.count {
            let written = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if written < 0 {
                if errno == EINTR { continue }
                throw lastError("write")
            }
            if written == 0 { throw SinkWriteError(errno: EIO, message: "write to \(path) made no progress") }
            done += written
        }
        highestOffset = max(highestOffset, offset + Int64(bytes.count))
    }

    private func lastError(_ call: String) -> SinkWriteError {
        let code = errno
        let text = String(cString: strerror(code))
        let hint = code == ENOSPC ? " (the disk is full)" : ""
        return SinkWriteError(errno: code, message: "\(call) to \(path) failed: \(text)\(hint)")
    }
}

@inline(__always)
private func systemClose(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.close(fd)
    #elseif canImport(Musl)
        Musl.close(fd)
    #else
        Darwin.close(fd)
    #endif
}
