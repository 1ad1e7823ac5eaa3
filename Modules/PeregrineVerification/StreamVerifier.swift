/// Checks bytes that arrive in pieces — a stream, a response body, a pipe — against an expected checksum.
///
/// ```swift
/// var verifier = try StreamVerifier(expecting: checksum)
/// for chunk in chunks { verifier.update(chunk) }
/// let result = verifier.finish()   // .verified or .mismatch(expected:actual:)
/// ```
///
/// Hashes on the caller's thread; for hashing beside a transfer on a thread of its own, use
/// `HashingSink`. Not thread-safe: feed one verifier from one thread at a time.
public struct StreamVerifier: ~Copyable {
    /// The checksum the bytes must have.
    public let expected: Checksum
    /// How many bytes were fed so far.
    public private(set) var byteCount: Int64 = 0
    private var hasher: StreamingHasher

    /// Creates a verifier for `expected`.
    ///
    /// - Throws: `VerificationError.Code.unsupportedAlgorithm` when OpenSSL lacks the algorithm.
    public init(expecting expected: Checksum) throws(VerificationError) {
        self.expected = expected
        hasher = try StreamingHasher(expected.algorithm)
    }

    /// Adds bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bytes)
        byteCount += Int64(bytes.count)
    }

    /// Adds bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        var count = 0
        let done: Void? = bytes.withContiguousStorageIfAvailable {
            count = $0.count
            hasher.update(UnsafeRawBufferPointer($0))
        }
        if done == nil {
            Array(bytes).withUnsafeBytes {
                count = $0.count
                hasher.update($0)
            }
        }
        byteCount += Int64(count)
    }

    /// Ends the computation and compares: `VerificationResult.verified` or
    /// `VerificationResult.mismatch(expected:actual:)`.
    public consuming func finish() -> VerificationResult {
        let expected = self.expected
        let digest = hasher.finalize()
        // The hasher gives exactly byteCount bytes of its own algorithm, so neither step can fail.
        guard let actual = try? Checksum(expected.algorithm, digest: digest) else { return .unverified }
        return (try? VerificationResult(expected: expected, actual: actual)) ?? .unverified
    }

    /// Reads an asynchronous sequence of byte chunks to its end and compares its digest with `expected`.
    ///
    /// - Throws: the sequence's own error, or `VerificationError` when OpenSSL lacks the algorithm.
    public static func verify<Chunks: AsyncSequence>(
        _ chunks: Chunks,
        against expected: Checksum,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> VerificationResult where Chunks.Element: Sequence<UInt8> {
        var verifier = try StreamVerifier(expecting: expected)
        for try await chunk in chunks { verifier.update(chunk) }
        return verifier.finish()
    }
}
