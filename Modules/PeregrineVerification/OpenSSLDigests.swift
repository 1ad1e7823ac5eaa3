internal import COpenSSL
import PeregrineTransport

/// The digests of OpenSSL's EVP interface (libcrypto): every `DigestAlgorithm`.
///
/// Stateless: one value serves every thread.
public struct OpenSSLDigests: DigestProvider {
    /// Creates the provider.
    public init() {}

    public func makeDigest(_ algorithm: DigestAlgorithm) throws(VerificationError) -> any IncrementalDigest {
        try OpenSSLDigest(algorithm)
    }
}

/// One EVP digest computation.
final class OpenSSLDigest: IncrementalDigest {
    private var hasher: StreamingHasher?

    init(_ algorithm: DigestAlgorithm) throws(VerificationError) {
        hasher = try StreamingHasher(algorithm)
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        hasher?.update(bytes)
    }

    func finalize() -> [UInt8] {
        hasher.take()?.finalize() ?? []
    }
}

extension HashingSink {
    /// Creates a sink that hashes with `algorithm` through OpenSSL and passes everything on to
    /// `downstream`.
    ///
    /// - Throws: `VerificationError.Code.unsupportedAlgorithm` when OpenSSL lacks the algorithm.
    public convenience init(
        _ algorithm: DigestAlgorithm,
        downstream: Downstream,
        options: Options = Options()
    ) throws(VerificationError) {
        try self.init(algorithm, downstream: downstream, options: options, digests: OpenSSLDigests())
    }
}

extension FileVerifier {
    /// Creates a verifier that reads `bufferSize` bytes at a time and hashes through OpenSSL.
    public init(bufferSize: Int = 1 << 20) {
        self.init(bufferSize: bufferSize, digests: OpenSSLDigests())
    }
}

extension VerificationError {
    /// Creates an error and appends (and clears) OpenSSL's error queue of this thread.
    static func fromOpenSSL(_ code: Code, _ message: String) -> VerificationError {
        var reasons: [String] = []
        while case let error = ERR_get_error(), error != 0 {
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(error, &text, text.count)
            reasons.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return VerificationError(code, reasons.isEmpty ? message : "\(message): \(reasons.joined(separator: "; "))")
    }
}

extension HashingSink {
    /// Creates a hashing sink in front of `sink` that hashes through OpenSSL: every write and
    /// flush goes on to `sink`, and the digest is computed on the hashing sink's own queue.
    ///
    /// - Throws: `VerificationError` when OpenSSL lacks the algorithm.
    public convenience init(
        _ algorithm: DigestAlgorithm,
        wrapping sink: any TransferSink,
        options: Options = Options()
    ) throws(VerificationError) {
        try self.init(algorithm, wrapping: sink, options: options, digests: OpenSSLDigests())
    }
}
