internal import COpenSSL

/// Computes a digest over bytes that arrive in pieces, through OpenSSL's EVP interface.
///
/// Not thread-safe: feed one hasher from one thread at a time. Feeding in any chunking gives
/// the same digest as one call with all the bytes.
public struct StreamingHasher: ~Copyable {
    /// The algorithm.
    public let algorithm: DigestAlgorithm
    private let context: OpaquePointer

    /// Creates a hasher.
    ///
    /// - Throws: `VerificationError` when OpenSSL does not offer the algorithm.
    public init(_ algorithm: DigestAlgorithm) throws(VerificationError) {
        OpenSSLLibrary.initializeOnce()
        guard let digest = EVP_get_digestbyname(algorithm.openSSLName) else {
            throw VerificationError.fromOpenSSL(.unsupportedAlgorithm, "OpenSSL has no \(algorithm)")
        }
        guard let context = EVP_MD_CTX_new() else {
            throw VerificationError.fromOpenSSL(.openSSL, "EVP_MD_CTX_new failed")
        }
        guard EVP_DigestInit_ex(context, digest, nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw VerificationError.fromOpenSSL(.openSSL, "EVP_DigestInit_ex(\(algorithm)) failed")
        }
        self.algorithm = algorithm
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        // EVP_DigestUpdate fails only on a context that was never initialised, which init rules out.
        _ = EVP_DigestUpdate(context, base, bytes.count)
    }

    /// Adds bytes.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// Ends the computation and returns the digest.
    public consuming func finalize() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = output.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        return Array(output.prefix(Int(length)))
    }

    /// The digest of `bytes` in one call.
    public static func digest(_ algorithm: DigestAlgorithm, of bytes: some Sequence<UInt8>) throws(VerificationError)
        -> [UInt8]
    {
        var hasher = try StreamingHasher(algorithm)
        hasher.update(bytes)
        return hasher.finalize()
    }
}

enum OpenSSLLibrary {
    /// Initialises libcrypto once, without an exit handler that could race threads still hashing.
    static func initializeOnce() { _ = initialized }
    private static let initialized: Bool = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1
}
