import Dispatch
import PeregrineCore
import PeregrineTransport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A sink that writes a file with `pwrite`, batching small writes, and writing large files with
/// direct I/O on a background queue so that receiving and writing overlap.
///
/// Writes at contiguous offsets collect in one of two buffers: 64 KiB ones at first, replaced
/// once by buffers of ``Options/bufferCapacity`` when the file outgrows them, so that a small
/// file never costs megabytes of memory (or an `mmap` and page faults). Until the file
/// reaches ``Options/backgroundThreshold`` a full buffer is written at once, on the caller's
/// thread, through the page cache — small files cost no thread and no extra latency. Past it,
/// a full buffer goes to a serial background queue while the other buffer fills, and its
/// block-aligned part is written with `O_DIRECT` (where the file system allows it), which skips
/// the page-cache copy; unaligned edges go through the page cache. Nothing is allocated per write.
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

    /// Tuning of a file sink.
    public struct Options: Sendable {
        /// The size of each of the two buffers; rounded up to a multiple of 4096.
        public var bufferCapacity: Int
        /// The file offset from which full buffers are written in the background.
        public var backgroundThreshold: Int64
        /// Whether block-aligned background writes use `O_DIRECT`.
        public var usesDirectIO: Bool

        /// Creates options: two 2 MiB buffers, background writing from 8 MiB on, direct I/O on.
        public init(bufferCapacity: Int = 2 << 20, backgroundThreshold: Int64 = 8 << 20, usesDirectIO: Bool = true) {
            self.bufferCapacity = bufferCapacity
            self.backgroundThreshold = backgroundThreshold
            self.usesDirectIO = usesDirectIO
        }
    }

    /// The file's path.
    public let path: String
    private let options: Options
    private var descriptor: Int32
    private var directDescriptor: Int32 = -1
    private var triedDirectIO = false
    /// The two buffers: small ones (``initialCapacity``) until the file outgrows them, then two
    /// of ``Options/bufferCapacity``, so that thousands of small files never touch megabytes.
    private var buffers: [UnsafeMutableRawBufferPointer]
    private var hasFullBuffers: Bool
    private var current = 0
    /// File offset of the first buffered byte; the byte sits at `buffer + batchStart % 4096`.
    private var batchStart: Int64 = 0
    private var bufferedCount = 0
    private var highestOffset: Int64 = 0
    // Background writing.
    private var queue: DispatchQueue?
    private let otherBufferFree = DispatchSemaphore(value: 1)
    private let backgroundError = Locked<SinkWriteError?>(nil)

    private static let block = 4096

    /// Opens (or creates, mode 0644) the file at `path`.
    ///
    /// - Throws: `SinkWriteError` with the errno of `open`.
    public init(path: String, mode: Mode = .truncate, options: Options = Options()) throws(SinkWriteError) {
        var flags = O_WRONLY | O_CREAT | O_CLOEXEC
        if case .truncate = mode { flags |= O_TRUNC }
        let fd = open(path, flags, 0o644)
        guard fd >= 0 else { throw Self.error(errno, "cannot open", path) }
        self.path = path
        self.options = options
        descriptor = fd
        let capacity = min(Self.fullCapacity(options), Self.initialCapacity)
        hasFullBuffers = capacity == Self.fullCapacity(options)
        buffers = [
            .allocate(byteCount: capacity, alignment: Self.block),
            .allocate(byteCount: capacity, alignment: Self.block),
        ]
    }

    /// The size of the buffers a file starts with (below `malloc`'s `mmap` threshold).
    static let initialCapacity = 64 << 10

    /// The size of each buffer once the file outgrew the initial ones.
    private static func fullCapacity(_ options: Options) -> Int {
        max((options.bufferCapacity + block - 1) / block, 2) * block
    }

    /// Moves to full-size buffers, carrying what is buffered over. Only before any background
    /// write (none can hold a buffer then); a file that started background writing keeps its
    /// buffers.
    private func growBuffers() {
        guard !hasFullBuffers, queue == nil else { return }
        hasFullBuffers = true
        let capacity = Self.fullCapacity(options)
        let grown: [UnsafeMutableRawBufferPointer] = [
            .allocate(byteCount: capacity, alignment: Self.block),
            .allocate(byteCount: capacity, alignment: Self.block),
        ]
        let held = Int(batchStart % Int64(Self.block)) + bufferedCount
        if held > 0 { grown[current].baseAddress!.copyMemory(from: buffers[current].baseAddress!, byteCount: held) }
        for buffer in buffers { buffer.deallocate() }
        buffers = grown
    }

    deinit {
        // Every background job holds the sink, so none is pending here (and this may run on the
        // queue itself, where waiting for it would deadlock).
        if descriptor >= 0 { _ = systemClose(descriptor) }
        if directDescriptor >= 0 { _ = systemClose(directDescriptor) }
        for buffer in buffers { buffer.deallocate() }
    }

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        guard bytes.count > 0 else { return }
        guard descriptor >= 0 else { throw SinkWriteError(errno: EBADF, message: "write to \(path) after close") }
        guard offset >= 0 else {
            throw SinkWriteError(errno: EINVAL, message: "write to \(path) at negative offset \(offset)")
        }
        if let error = backgroundError.withLock({ $0 }) { throw error }
        if bufferedCount > 0, offset != batchStart + Int64(bufferedCount) {
            try finishBatch(keepingTail: false)
        }
        var remaining = bytes
        var offset = offset
        while !remaining.isEmpty {
            if bufferedCount == 0 { batchStart = offset }
            let lead = Int(batchStart % Int64(Self.block))
            if !hasFullBuffers, lead + bufferedCount + remaining.count >= buffers[current].count { growBuffers() }
            let room = buffers[current].count - lead - bufferedCount
            let count = min(room, remaining.count)
            (buffers[current].baseAddress! + lead + bufferedCount).copyMemory(
                from: remaining.baseAddress!,
                byteCount: count
            )
            bufferedCount += count
            offset += Int64(count)
            remaining = UnsafeRawBufferPointer(rebasing: remaining[count...])
            if bufferedCount + lead == buffers[current].count {
                try finishBatch(keepingTail: true)
            }
        }
    }

    public func flush() throws {
        try finishBatch(keepingTail: false)
        queue?.sync {}
        if let error = backgroundError.withLock({ $0 }) { throw error }
    }

    /// Flushes and `fsync`s the file, and returns the end of the highest write: every byte before
    /// it that was written is now on stable storage.
    @discardableResult
    public func synchronize() throws(SinkWriteError) -> Int64 {
        do { try flush() } catch let error as SinkWriteError { throw error } catch {
            throw Self.error(EIO, "flush", path)
        }
        guard fsync(descriptor) == 0 else { throw Self.error(errno, "fsync", path) }
        return highestOffset
    }

    /// Reserves the file's blocks up to `length` (`fallocate` with `FALLOC_FL_KEEP_SIZE`: the
    /// file's size stays what was written), so that writes below it cannot run out of space.
    /// A file system that cannot reserve (`EOPNOTSUPP`) is left as it is.
    ///
    /// - Throws: `SinkWriteError` with `ENOSPC` when the space is not there.
    public func reserve(upTo length: Int64) throws(SinkWriteError) {
        guard length > 0, let fallocate = Fallocate.function else { return }
        // 1 = FALLOC_FL_KEEP_SIZE
        guard fallocate(descriptor, 1, 0, length) != 0 else { return }
        let code = errno
        if code == EOPNOTSUPP || code == ENOSYS { return }
        throw Self.error(code, "fallocate", path)
    }

    /// Flushes and closes the file. Further writes fail with `EBADF`.
    /// Locks the file for this sink's writer (see `PartFileLock`) on a duplicate of its
    /// descriptor, so that the lock outlives ``close()``; nil when another writer holds it.
    func lockForWriting() throws(SinkWriteError) -> PartFileLock? {
        // Close-on-exec like every descriptor here: a child process (ffmpeg, a test's server)
        // that inherited it would hold the lock for as long as it lives.
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else { throw Self.error(errno, "cannot lock", path) }
        switch PartFileLock.take(duplicate) {
        case .locked(let lock): return lock
        case .busy: return nil
        case .failed(let code): throw Self.error(code, "cannot lock", path)
        }
    }

    /// Cuts the file to zero bytes: a fresh start opened without `O_TRUNC`, to be locked first.
    func truncateToZero() throws(SinkWriteError) {
        guard ftruncate(descriptor, 0) == 0 else { throw Self.error(errno, "cannot truncate", path) }
    }

    public func close() throws(SinkWriteError) {
        guard descriptor >= 0 else { return }
        defer {
            // A background write may still run (also when flush threw early): let it end first.
            queue?.sync {}
            _ = systemClose(descriptor)
            descriptor = -1
            if directDescriptor >= 0 { _ = systemClose(directDescriptor) }
            directDescriptor = -1
        }
        do { try flush() } catch let error as SinkWriteError { throw error } catch {
            throw Self.error(EIO, "flush", path)
        }
    }

    // MARK: Batches

    /// Writes out the current buffer. With `keepingTail`, in background mode, the last partial
    /// block stays buffered (moved to the other buffer) so that every direct write is aligned.
    private func finishBatch(keepingTail: Bool) throws(SinkWriteError) {
        guard bufferedCount > 0 else { return }
        let start = batchStart
        let end = start + Int64(bufferedCount)
        let buffer = buffers[current]
        let lead = Int(start % Int64(Self.block))
        highestOffset = max(highestOffset, end)

        guard end > options.backgroundThreshold else {
            bufferedCount = 0
            // An earlier background write must not land after (and over) this one.
            queue?.sync {}
            try writeAll(descriptor, buffer.baseAddress! + lead, count: Int(end - start), at: start)
            return
        }
        let alignedStart = start - Int64(lead)
        let tailStart = keepingTail ? end - end % Int64(Self.block) : end
        let tailCount = Int(end - tailStart)
        if let error = backgroundError.withLock({ $0 }) { throw error }
        let queue = self.queue ?? DispatchQueue(label: "peregrine.file-sink")
        self.queue = queue
        let directFD = directDescriptorIfUsable()
        let job = BackgroundWrite(
            sink: self,
            base: buffer.baseAddress!,
            alignedStart: alignedStart,
            start: start,
            end: tailStart,
            directDescriptor: directFD
        )
        queue.async { job.run() }
        // Take the other buffer once its previous write is done, and carry the partial block over.
        otherBufferFree.wait()
        current = 1 - current
        if tailCount > 0 {
            buffers[current].baseAddress!.copyMemory(
                from: buffer.baseAddress! + Int(tailStart - alignedStart),
                byteCount: tailCount
            )
        }
        batchStart = tailStart
        bufferedCount = tailCount
    }

    /// One background write; signals the semaphore when its buffer may be reused.
    private struct BackgroundWrite: @unchecked Sendable {
        let sink: FileSink
        let base: UnsafeMutableRawPointer
        let alignedStart: Int64
        let start: Int64
        let end: Int64
        let directDescriptor: Int32

        func run() {
            defer { sink.otherBufferFree.signal() }
            do {
                try sink.writeRange(
                    base: base, alignedStart: alignedStart, from: start, to: end, direct: directDescriptor)
            } catch {
                sink.backgroundError.withLock { if $0 == nil { $0 = error } }
            }
        }
    }

    /// Writes file range `from..<to`, held at `base + (offset - alignedStart)`: the aligned middle
    /// through `direct` (when ≥ 0), the unaligned edges through the page cache.
    private func writeRange(
        base: UnsafeMutableRawPointer,
        alignedStart: Int64,
        from start: Int64,
        to end: Int64,
        direct: Int32
    ) throws(SinkWriteError) {
        let block = Int64(Self.block)
        let middleStart = (start + block - 1) / block * block
        let middleEnd = end / block * block
        guard direct >= 0, middleEnd > middleStart else {
            try writeAll(descriptor, base + Int(start - alignedStart), count: Int(end - start), at: start)
            return
        }
        if middleStart > start {
            try writeAll(descriptor, base + Int(start - alignedStart), count: Int(middleStart - start), at: start)
        }
        do {
            try writeAll(
                direct, base + Int(middleStart - alignedStart), count: Int(middleEnd - middleStart), at: middleStart)
        } catch  where error.errno == EINVAL {
            // The file system refused this alignment after all: write through the page cache.
            try writeAll(
                descriptor, base + Int(middleStart - alignedStart), count: Int(middleEnd - middleStart), at: middleStart
            )
        }
        if end > middleEnd {
            try writeAll(descriptor, base + Int(middleEnd - alignedStart), count: Int(end - middleEnd), at: middleEnd)
        }
    }

    private func directDescriptorIfUsable() -> Int32 {
        guard options.usesDirectIO, !triedDirectIO else { return directDescriptor }
        triedDirectIO = true
        #if os(Linux)
            // A file system without direct I/O (tmpfs) refuses the open with EINVAL: stay buffered.
            // Through the open descriptor, not the path: the file may have been renamed meanwhile.
            directDescriptor = open("/proc/self/fd/\(descriptor)", O_WRONLY | O_CLOEXEC | linuxODirect)
        #endif
        return directDescriptor
    }

    private func writeAll(_ fd: Int32, _ bytes: UnsafeRawPointer, count: Int, at offset: Int64) throws(SinkWriteError) {
        var done = 0
        while done < count {
            let written = pwrite(fd, bytes + done, count - done, off_t(offset) + off_t(done))
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.error(errno, "write", path)
            }
            if written == 0 { throw SinkWriteError(errno: EIO, message: "write to \(path) made no progress") }
            done += written
        }
    }

    private static func error(_ code: Int32, _ call: String, _ path: String) -> SinkWriteError {
        let text = String(cString: strerror(code))
        let hint = code == ENOSPC ? " (the disk is full)" : ""
        return SinkWriteError(errno: code, message: "\(call) \(path) failed: \(text)\(hint)")
    }
}

#if os(Linux)
    // Glibc exposes O_DIRECT only under _GNU_SOURCE, which Swift's import does not define.
    #if arch(arm64) || arch(arm)
        private let linuxODirect: Int32 = 0o200000
    #else
        private let linuxODirect: Int32 = 0o40000
    #endif
#endif

/// The C library's `fallocate(2)`, which Swift's Glibc module does not import (glibc declares
/// it under `_GNU_SOURCE` only): looked up once by name; nil where there is none.
private enum Fallocate {
    typealias Function = @convention(c) (Int32, Int32, Int64, Int64) -> Int32

    struct Box: @unchecked Sendable { let function: Function? }

    static let box: Box = {
        guard let process = dlopen(nil, RTLD_NOW) else { return Box(function: nil) }
        guard let symbol = dlsym(process, "fallocate64") ?? dlsym(process, "fallocate") else {
            return Box(function: nil)
        }
        return Box(function: unsafeBitCast(symbol, to: Function.self))
    }()

    static var function: Function? { box.function }
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
