import Dispatch
import PeregrineCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Computes a digest of a transfer's body while it is written: a decorator for the sink that
/// stores the bytes (a `FileSink`), so that downloading, writing and hashing overlap and
/// verification costs no second pass over the file.
///
/// Every ``write(_:at:)`` goes on to the wrapped sink (``Downstream``) unchanged. Its bytes are
/// also copied into one of ``Options/bufferCount`` buffers, allocated once, which a serial
/// queue of its own hashes in order while the writer goes on. When the hasher falls behind and
/// every buffer is waiting, `write` blocks until one is free: memory stays bounded at
/// `bufferCount × bufferCapacity` (4 MiB by default), and a slow hasher slows the transfer down
/// instead of queueing its bytes. Nothing is allocated per write; one small dispatch per full buffer.
///
/// The digest covers bytes `0..<end`. Writes must come at contiguous offsets from 0 — or from
/// the length given to ``prime(fromFileAt:length:)`` when resuming. A write anywhere else (a gap
/// or a rewind) *invalidates* the sink: it keeps passing writes on, stops hashing, reports
/// ``State/invalidated(_:)``, and ``finish()`` throws ``VerificationError/Code/nonContiguousWrite``
/// rather than return a digest that is not the file's. Check the finished file with
/// ``FileVerifier`` then.
///
/// Resuming: create a new sink, ``prime(fromFileAt:length:)`` it with the bytes already on disk
/// (read once, on the hashing queue), then start the ranged transfer at `length`.
///
/// ```swift
/// let file = try FileSink(path: partial)
/// let hashing = try HashingSink(.sha256, wrapping: file, digests: OpenSSLDigests())
/// _ = try await transport.download(request, to: hashing)
/// try file.close()
/// switch try hashing.verify(against: expected) { … }
/// ```
///
/// Thread safety: like any transfer sink, ``write(_:at:)``, ``flush()``, ``finish()`` and
/// ``verify(against:)`` are called from one thread at a time; ``state`` may be read from any thread.
public final class HashingSink: @unchecked Sendable {
    /// Buffering of a hashing sink.
    public struct Options: Sendable, Hashable {
        /// The size of each buffer; bytes are handed to the hasher a full buffer at a time.
        public var bufferCapacity: Int
        /// How many buffers may wait for the hasher before writes block; at least 2.
        public var bufferCount: Int

        /// Creates options: four 1 MiB buffers.
        public init(bufferCapacity: Int = 1 << 20, bufferCount: Int = 4) {
            self.bufferCapacity = max(bufferCapacity, 1)
            self.bufferCount = max(bufferCount, 2)
        }
    }

    /// Where a hashing sink passes each write and flush on: the wrapped sink's two calls.
    ///
    /// `init(_:wrapping:options:)` builds one from any `TransferSink`; a downstream of your own
    /// (or ``none``) hashes bytes that are stored elsewhere or not at all.
    public struct Downstream: Sendable {
        /// Stores bytes at a file offset.
        public var write: @Sendable (UnsafeRawBufferPointer, Int64) throws -> Void
        /// Writes out anything buffered.
        public var flush: @Sendable () throws -> Void

        /// Creates a downstream from the wrapped sink's calls.
        public init(
            write: @escaping @Sendable (UnsafeRawBufferPointer, Int64) throws -> Void,
            flush: @escaping @Sendable () throws -> Void
        ) {
            self.write = write
            self.flush = flush
        }

        /// Bytes go nowhere: only the digest is computed.
        public static var none: Downstream { Downstream(write: { _, _ in }, flush: {}) }
    }

    /// Where a hashing sink stands.
    public enum State: Sendable, Hashable {
        /// Hashing; the next write must start at `nextOffset`.
        case hashing(nextOffset: Int64)
        /// No digest will come: a non-contiguous write, a failed priming read or a failed
        /// downstream write. Writes still pass on to the wrapped sink.
        case invalidated(VerificationError)
        /// ``HashingSink/finish()`` returned this checksum; further writes fail.
        case finished(Checksum)
    }

    /// The algorithm.
    public let algorithm: DigestAlgorithm
    /// The buffering.
    public let options: Options
    private let downstream: Downstream
    private let core: Core
    // The writer's side, touched only by the one thread writing at a time.
    private var current: UnsafeMutableRawBufferPointer?
    private var filled = 0
    private var ring = 0

    /// Creates a sink that hashes with `algorithm`, computed by `digests`, and passes
    /// everything on to `downstream`.
    ///
    /// - Throws: ``VerificationError/Code/unsupportedAlgorithm`` when `digests` lacks the algorithm.
    public init(
        _ algorithm: DigestAlgorithm,
        downstream: Downstream,
        options: Options = Options(),
        digests: any DigestProvider
    ) throws(VerificationError) {
        self.algorithm = algorithm
        self.options = options
        self.downstream = downstream
        core = Core(hasher: try digests.makeDigest(algorithm), options: options)
    }

    deinit {
        // Give back a buffer taken and not handed to the hasher (a transfer that failed midway).
        if current != nil { core.freeBuffers.signal() }
    }

    /// Where the sink stands. Any thread.
    public var state: State { core.state.withLock { $0.public } }

    /// Passes the bytes on to the wrapped sink and queues them for hashing; blocks while every
    /// buffer waits for the hasher.
    ///
    /// - Throws: the wrapped sink's error (which also invalidates the digest), or
    ///   ``VerificationError/Code/invalidUse`` after ``finish()``.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        let hashes: Bool = try core.state.withLock { state throws(VerificationError) in
            switch state.phase {
            case .finished:
                throw VerificationError(.invalidUse, "write at offset \(offset) after the digest was taken")
            case .invalidated:
                return false
            case .hashing:
                guard bytes.count > 0 else { return false }
                guard offset == state.nextOffset else {
                    let what =
                        offset < state.nextOffset
                        ? "a rewind of \(state.nextOffset - offset) bytes"
                        : "a gap of \(offset - state.nextOffset) bytes"
                    state.phase = .invalidated(
                        VerificationError(
                            .nonContiguousWrite,
                            "a write at offset \(offset) where \(state.nextOffset) was next (\(what)): "
                                + "the digest would not be the file's; verify the finished file instead"))
                    return false
                }
                state.nextOffset += Int64(bytes.count)
                return true
            }
        }
        if hashes { enqueue(bytes) }
        do {
            try downstream.write(bytes, offset)
        } catch {
            core.invalidate(
                VerificationError(.downstreamWriteFailed, "the wrapped sink failed at offset \(offset): \(error)"))
            throw error
        }
    }

    /// Flushes the wrapped sink, and hands the bytes buffered so far to the hasher.
    public func flush() throws {
        submitCurrent()
        try downstream.flush()
    }

    /// Hashes bytes `0..<length` of the file at `path` — the part of a resumed download already
    /// on disk — before any byte written later. Call it once, before the first write; the first
    /// write must then come at `length`.
    ///
    /// The file is opened (and its size checked) at once; it is read once, on the hashing
    /// queue, and the call returns when it has been hashed. Writes may already go on meanwhile:
    /// they wait behind the priming read, up to ``Options/bufferCount`` buffers.
    ///
    /// - Throws: ``VerificationError/Code/unreadableFile`` when the file cannot be opened or
    ///   read or holds fewer than `length` bytes (the sink is then invalidated, as it is when a
    ///   read fails), or ``VerificationError/Code/invalidUse`` after a write, a priming or ``finish()``.
    public func prime(fromFileAt path: String, length: Int64) async throws(VerificationError) {
        let descriptor = try claimPriming(fromFileAt: path, length: length)
        let core = self.core
        let result: Result<Void, VerificationError> = await withCheckedContinuation { continuation in
            core.queue.async {
                defer { _ = close(descriptor) }
                continuation.resume(returning: core.hashFile(descriptor, path: path, length: length))
            }
        }
        try result.get()
    }

    /// Queues bytes `0..<length` of the file at `path` to be hashed before any byte written
    /// later, and returns at once: ``prime(fromFileAt:length:)`` for callers that cannot wait,
    /// such as a transfer being set up on a transport's thread.
    ///
    /// The file is opened and its size checked now; it is read on the hashing queue while the
    /// first writes (at `length`) already go on — they wait behind the read, up to
    /// ``Options/bufferCount`` buffers. A failed read invalidates the sink, and ``finish()``
    /// then throws ``VerificationError/Code/unreadableFile``.
    ///
    /// - Throws: as ``prime(fromFileAt:length:)`` does for opening the file and for misuse.
    public func startPriming(fromFileAt path: String, length: Int64) throws(VerificationError) {
        let descriptor = try claimPriming(fromFileAt: path, length: length)
        let core = self.core
        core.queue.async {
            defer { _ = close(descriptor) }
            _ = core.hashFile(descriptor, path: path, length: length)
        }
    }

    /// Marks the sink primed with `length` bytes and opens the file; returns its descriptor.
    private func claimPriming(fromFileAt path: String, length: Int64) throws(VerificationError) -> Int32 {
        guard length >= 0 else { throw VerificationError(.invalidUse, "cannot prime with \(length) bytes") }
        let misuse: VerificationError? = core.state.withLock { state in
            guard case .hashing = state.phase, state.nextOffset == 0, !state.primed else {
                return VerificationError(.invalidUse, "prime(fromFileAt:length:) must come first, and once")
            }
            state.primed = true
            state.nextOffset = length
            return nil
        }
        if let misuse { throw misuse }
        // From here on the sink expects writes at `length`: without the file's bytes its digest is void.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = FileVerifier.unreadable(path, "cannot open", errno)
            core.invalidate(error)
            throw error
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Int64(status.st_size) >= length
        else {
            let size = Int64(status.st_size)
            _ = close(descriptor)
            let error = VerificationError(
                .unreadableFile, "\(path) holds \(size) bytes, fewer than the \(length) already downloaded")
            core.invalidate(error)
            throw error
        }
        return descriptor
    }

    /// Waits for the hasher to catch up and returns the checksum of every byte written (and
    /// primed). Calling it again returns the same checksum.
    ///
    /// - Throws: the reason of ``State/invalidated(_:)``: ``VerificationError/Code/nonContiguousWrite``,
    ///   ``VerificationError/Code/unreadableFile`` (priming) or ``VerificationError/Code/downstreamWriteFailed``.
    public func finish() throws(VerificationError) -> Checksum {
        if case .finished(let checksum) = state { return checksum }
        submitCurrent()
        let core = self.core
        let algorithm = self.algorithm
        let result: Result<Checksum, VerificationError> = core.queue.sync { core.finalize(algorithm) }
        return try result.get()
    }

    /// Finishes and compares with the expected checksum.
    ///
    /// - Returns: ``VerificationResult/verified`` or ``VerificationResult/mismatch(expected:actual:)``.
    /// - Throws: as ``finish()`` does, or ``VerificationError/Code/algorithmMismatch`` when
    ///   `expected` is not of this sink's algorithm.
    public func verify(against expected: Checksum) throws(VerificationError) -> VerificationResult {
        guard expected.algorithm == algorithm else {
            throw VerificationError(
                .algorithmMismatch, "this sink computes \(algorithm), the expected checksum is \(expected.algorithm)")
        }
        return try VerificationResult(expected: expected, actual: finish())
    }

    // MARK: Buffers

    /// Copies bytes into the current buffer, handing each full one to the hasher.
    private func enqueue(_ bytes: UnsafeRawBufferPointer) {
        var remaining = bytes
        while !remaining.isEmpty {
            let buffer: UnsafeMutableRawBufferPointer
            if let current {
                buffer = current
            } else {
                // Back-pressure: wait until the hasher gives a buffer back.
                core.freeBuffers.wait()
                buffer = core.buffers[ring]
                ring = (ring + 1) % core.buffers.count
                current = buffer
                filled = 0
            }
            let count = min(buffer.count - filled, remaining.count)
            (buffer.baseAddress! + filled).copyMemory(from: remaining.baseAddress!, byteCount: count)
            filled += count
            remaining = UnsafeRawBufferPointer(rebasing: remaining[count...])
            if filled == buffer.count { submitCurrent() }
        }
    }

    /// Hands the current buffer, full or not, to the hasher.
    private func submitCurrent() {
        guard let buffer = current else { return }
        current = nil
        let job = HashJob(core: core, bytes: UnsafeRawBufferPointer(rebasing: buffer[0..<filled]))
        filled = 0
        core.queue.async { job.run() }
    }

    /// Hashes one buffer on the queue and gives it back.
    private struct HashJob: @unchecked Sendable {
        let core: Core
        let bytes: UnsafeRawBufferPointer

        func run() {
            core.hash(bytes)
            core.freeBuffers.signal()
        }
    }

    // MARK: The hashing side

    private struct SharedState {
        enum Phase {
            case hashing
            case invalidated(VerificationError)
            case finished(Checksum)
        }
        var phase = Phase.hashing
        var nextOffset: Int64 = 0
        var primed = false

        var `public`: State {
            switch phase {
            case .hashing: .hashing(nextOffset: nextOffset)
            case .invalidated(let error): .invalidated(error)
            case .finished(let checksum): .finished(checksum)
            }
        }
    }

    /// What the writer and the hashing queue share. The hasher itself is touched only on ``queue``.
    private final class Core: @unchecked Sendable {
        let queue = DispatchQueue(label: "peregrine.hashing")
        let buffers: [UnsafeMutableRawBufferPointer]
        let freeBuffers: DispatchSemaphore
        let state = Locked(SharedState())
        private let readSize: Int
        private var hasher: (any IncrementalDigest)?

        init(hasher: any IncrementalDigest, options: Options) {
            self.hasher = hasher
            buffers = (0..<options.bufferCount).map { _ in
                .allocate(byteCount: options.bufferCapacity, alignment: 64)
            }
            // Created at 0 and raised: libdispatch traps when a semaphore is destroyed below its
            // initial value, which a sink released in the middle of a buffer would otherwise do.
            freeBuffers = DispatchSemaphore(value: 0)
            for _ in 0..<options.bufferCount { freeBuffers.signal() }
            readSize = max(options.bufferCapacity, 1 << 20)
        }

        deinit {
            // Jobs hold the core, so none is left: every buffer is free.
            for buffer in buffers { buffer.deallocate() }
        }

        var isHashing: Bool {
            state.withLock {
                if case .hashing = $0.phase { return true }
                return false
            }
        }

        func invalidate(_ error: VerificationError) {
            state.withLock { state in
                if case .hashing = state.phase { state.phase = .invalidated(error) }
            }
        }

        /// On the queue.
        func hash(_ bytes: UnsafeRawBufferPointer) {
            guard isHashing else { return }
            hasher?.update(bytes)
        }

        /// On the queue: hashes `0..<length` of an open file.
        func hashFile(_ descriptor: Int32, path: String, length: Int64) -> Result<Void, VerificationError> {
            guard length > 0 else { return .success(()) }
            #if os(Linux)
                _ = posix_fadvise(descriptor, 0, off_t(length), POSIX_FADV_SEQUENTIAL)
            #endif
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readSize, alignment: 4096)
            defer { buffer.deallocate() }
            var done: Int64 = 0
            while done < length {
                let wanted = Int(min(Int64(buffer.count), length - done))
                let count = pread(descriptor, buffer.baseAddress, wanted, off_t(done))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    let error =
                        count < 0
                        ? FileVerifier.unreadable(path, "cannot read", errno)
                        : VerificationError(
                            .unreadableFile, "\(path) ended at \(done) bytes, before the \(length) already downloaded")
                    invalidate(error)
                    return .failure(error)
                }
                hash(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                done += Int64(count)
            }
            return .success(())
        }

        /// On the queue, once every job ran: the digest, or why there is none.
        func finalize(_ algorithm: DigestAlgorithm) -> Result<Checksum, VerificationError> {
            state.withLock { state -> Result<Checksum, VerificationError> in
                switch state.phase {
                case .finished(let checksum): return .success(checksum)
                case .invalidated(let error): return .failure(error)
                case .hashing:
                    guard let hasher = hasher.take() else {
                        return .failure(VerificationError(.invalidUse, "the hasher is gone"))
                    }
                    do throws(VerificationError) {
                        let checksum = try Checksum(algorithm, digest: hasher.finalize())
                        state.phase = .finished(checksum)
                        return .success(checksum)
                    } catch {
                        return .failure(error)
                    }
                }
            }
        }
    }
}
