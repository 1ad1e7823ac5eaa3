import PeregrineTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The sink of one transfer: a ``FileSink`` on the task's temporary file, opened at the first
/// byte, so a transfer that writes nothing (an empty file, a 404) creates no file and costs no
/// buffers.
///
/// Thread safety: used by the transport's thread only (writes, and the engine's checkpoints
/// and close, which run in the transfer's event handler between writes).
final class TemporaryFileSink: TransferSink, @unchecked Sendable {
    /// The temporary file's path.
    let path: String
    /// The first byte this transfer writes; the bytes before it are on disk already.
    let startOffset: Int64
    /// Whether a transfer from byte 0 truncates the file when it opens it (false for the pieces
    /// of a segmented transfer, which share the file).
    let truncates: Bool
    private var file: FileSink?
    private var isClosed = false
    /// The end of the bytes written so far (``startOffset`` before the first).
    private(set) var writtenEnd: Int64
    /// The bytes this transfer expects to write, from the response head: a small file gets
    /// buffers of its size instead of two 2 MiB ones (P2: thousands of 16 KiB files).
    var expectedByteCount: Int64?
    /// Whether opening the file reserves its blocks up to the expected end (see
    /// ``FileSink/reserve(upTo:)``), so that a full disk fails the download at its start.
    var preallocates = false
    /// Whether the attempt holds the file's lock already (it cut the file for a resume);
    /// otherwise opening the file locks it, before cutting it for a fresh start.
    var isLockedAlready = false
    /// The lock taken when the file was opened; it outlives ``close()``.
    private var lock: PartFileLock?
    /// Whether opening found another writer holding the file (nothing was written to it).
    private(set) var foundBusy = false

    init(path: String, startOffset: Int64, truncates: Bool = true) {
        self.path = path
        self.startOffset = startOffset
        self.truncates = truncates
        writtenEnd = startOffset
    }

    /// Whether a byte was written (the file was opened).
    private(set) var isOpened = false

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        guard let file else {
            guard !isClosed else { throw SinkWriteError(errno: 9, message: "write to \(path) after close") }  // EBADF
            var options = FileSink.Options()
            if let expected = expectedByteCount, expected > 0 {
                options.bufferCapacity = Int(min(expected, Int64(options.bufferCapacity)))
            }
            let cuts = startOffset == 0 && truncates
            let opened = try FileSink(
                path: path, mode: cuts && isLockedAlready ? .truncate : .keepExisting, options: options)
            if !isLockedAlready {
                guard let taken = try opened.lockForWriting() else {
                    foundBusy = true
                    isClosed = true
                    try? opened.close()
                    throw SinkWriteError(
                        errno: EWOULDBLOCK, message: "another process is writing \(path) (it holds the file's lock)")
                }
                lock = taken
                if cuts { try opened.truncateToZero() }
            }
            file = opened
            isOpened = true
            if preallocates, let expected = expectedByteCount, expected > 0 {
                try opened.reserve(upTo: startOffset + expected)
            }
            try opened.write(bytes, at: offset)
            writtenEnd = max(writtenEnd, offset + Int64(bytes.count))
            return
        }
        try file.write(bytes, at: offset)
        writtenEnd = max(writtenEnd, offset + Int64(bytes.count))
    }

    func flush() throws { try file?.flush() }

    /// Flushes and `fsync`s; returns the offset up to which the file is durable.
    func synchronize() throws(SinkWriteError) -> Int64 {
        guard let file else {
            if isClosed, isOpened { throw SinkWriteError(errno: 9, message: "sync of \(path) after close") }  // EBADF
            return startOffset
        }
        return max(startOffset, try file.synchronize())
    }

    /// Ends the lock taken when the file was opened.
    func releaseLock() {
        lock?.release()
        lock = nil
    }

    /// Flushes and closes the file, and lets its buffers go; later writes fail.
    func close() throws(SinkWriteError) {
        isClosed = true
        defer { file = nil }
        try file?.close()
    }
}
