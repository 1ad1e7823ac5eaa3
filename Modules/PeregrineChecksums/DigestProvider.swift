/// Computes digests: the seam where a hashing library plugs in.
///
/// The checksum types, checksum-file parsing, ``HashingSink`` and ``FileVerifier`` need only
/// this protocol, so a program that verifies nothing links no hashing library.
/// `PeregrineVerification` ships the implementation over OpenSSL's EVP interface
/// (`OpenSSLDigests`); a test may pass its own.
public protocol DigestProvider: Sendable {
    /// A new computation of `algorithm`'s digest.
    ///
    /// - Throws: ``VerificationError/Code/unsupportedAlgorithm`` when the provider does not
    ///   offer the algorithm.
    func makeDigest(_ algorithm: DigestAlgorithm) throws(VerificationError) -> any IncrementalDigest
}

/// One digest computation over bytes that arrive in pieces. Feeding in any chunking gives the
/// same digest as one call with all the bytes.
///
/// Not thread-safe: one computation is fed from one thread at a time (``HashingSink`` feeds it
/// on its own queue).
public protocol IncrementalDigest: AnyObject {
    /// Adds bytes.
    func update(_ bytes: UnsafeRawBufferPointer)
    /// Ends the computation and returns the digest; the computation is unusable afterwards.
    func finalize() -> [UInt8]
}

extension IncrementalDigest {
    /// Adds bytes.
    public func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }
}

extension DigestProvider {
    /// The digest of `bytes` in one call.
    public func digest(_ algorithm: DigestAlgorithm, of bytes: some Sequence<UInt8>) throws(VerificationError)
        -> [UInt8]
    {
        let digest = try makeDigest(algorithm)
        digest.update(bytes)
        return digest.finalize()
    }
}

extension Sequence<UInt8> {
    /// Lower-case hexadecimal digits.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
