#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Computes and checks digests of files on disk, reading them in large pieces: never the whole
/// file in memory, one buffer allocated per call.
///
/// Use it to verify a finished download again (a file changed on disk after it finished is a
/// ``VerificationResult/mismatch(expected:actual:)``), to check a file against a
/// `SHA256SUMS` entry, or as the fallback when a ``HashingSink`` could not hash a transfer.
///
/// Thread safety: a value type with no state; calls may run concurrently. Each call blocks its
/// thread while it reads; from Swift concurrency, call it from a task that may block.
public struct FileVerifier: Sendable {
    /// The size of each read; 1 MiB by default, at least 4 KiB.
    public var bufferSize: Int
    /// What computes the digests.
    public var digests: any DigestProvider

    /// Creates a verifier that reads `bufferSize` bytes at a time and hashes with `digests`.
    public init(bufferSize: Int = 1 << 20, digests: any DigestProvider) {
        self.bufferSize = max(bufferSize, 4096)
        self.digests = digests
    }

    /// Whether the file at `path` has the `expected` checksum.
    ///
    /// - Returns: ``VerificationResult/verified`` or ``VerificationResult/mismatch(expected:actual:)``.
    /// - Throws: ``VerificationError/Code/unreadableFile`` when the file cannot be opened or read
    ///   (missing, a directory, no permission, an I/O error).
    public func verify(fileAt path: String, against expected: Checksum) throws(VerificationError)
        -> VerificationResult
    {
        try VerificationResult(expected: expected, actual: checksum(ofFileAt: path, algorithm: expected.algorithm))
    }

    /// The checksum of the file at `path`.
    ///
    /// - Throws: ``VerificationError/Code/unreadableFile`` when the file cannot be opened or read.
    public func checksum(ofFileAt path: String, algorithm: DigestAlgorithm) throws(VerificationError) -> Checksum {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Self.unreadable(path, "cannot open", errno) }
        defer { _ = close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw Self.unreadable(path, "cannot read", EISDIR)
        }
        #if os(Linux)
            // Sequential read-ahead: the kernel reads ahead of us on a cold cache.
            _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_SEQUENTIAL)
        #endif
        return try checksum(ofDescriptor: descriptor, algorithm: algorithm, name: path)
    }

    /// The checksum of everything left to read from an open file descriptor (a file, a pipe,
    /// standard input), read to its end. The descriptor stays open.
    ///
    /// - Parameter descriptor: the open descriptor to read from.
    /// - Parameter algorithm: the digest to compute.
    /// - Parameter name: how messages name the source.
    /// - Throws: ``VerificationError/Code/unreadableFile`` when a read fails.
    public func checksum(ofDescriptor descriptor: Int32, algorithm: DigestAlgorithm, name: String = "input")
        throws(VerificationError) -> Checksum
    {
        let hasher = try digests.makeDigest(algorithm)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 4096)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.unreadable(name, "cannot read", errno)
            }
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        return try Checksum(algorithm, digest: hasher.finalize())
    }

    static func unreadable(_ path: String, _ what: String, _ code: Int32) -> VerificationError {
        VerificationError(.unreadableFile, "\(what) \(path): \(String(cString: strerror(code)))")
    }
}
