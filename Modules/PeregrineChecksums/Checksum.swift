/// An expected (or computed) digest: an algorithm and its bytes.
///
/// Read one from what users and servers write:
///
/// | text | form |
/// |---|---|
/// | `sha256=9f86d0…` or `sha256:9F86D0…` | algorithm and hex, in either case |
/// | `sha-256=:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=:` | RFC 9530 (`Repr-Digest`, `Content-Digest`): structured-field base64 |
/// | `SHA-256=n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=` | RFC 3230 (`Digest`): bare base64 |
///
/// Algorithm names are read by ``DigestAlgorithm/init(name:)`` (`SHA256`, `sha-256`, `sha3-256`,
/// `blake2b-512`, …). A bare digest is base64 when it has a character only base64 has (`+`, `/`,
/// `=`) or the length and alphabet of base64 without being hex; otherwise it is hex. Every malformed text is a typed
/// ``VerificationError`` at parse time — never a mismatch found after the download.
///
/// Stored (`Codable`) as its ``description``, `algorithm=hex`, which parses back to itself.
public struct Checksum: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The algorithm.
    public let algorithm: DigestAlgorithm
    /// The digest; exactly `algorithm.byteCount` bytes.
    public let digest: [UInt8]

    /// Creates a checksum from digest bytes.
    ///
    /// - Throws: ``VerificationError/Code/wrongDigestLength`` when `digest` is not `algorithm.byteCount` bytes.
    public init(_ algorithm: DigestAlgorithm, digest: [UInt8]) throws(VerificationError) {
        guard digest.count == algorithm.byteCount else {
            throw VerificationError(
                .wrongDigestLength, "a \(algorithm) digest has \(algorithm.byteCount) bytes, not \(digest.count)")
        }
        self.algorithm = algorithm
        self.digest = digest
    }

    /// Creates a checksum from a hex digest, in either case.
    ///
    /// - Throws: ``VerificationError/Code/invalidHex``, ``VerificationError/Code/wrongDigestLength``
    ///   or ``VerificationError/Code/emptyChecksum``.
    public init(_ algorithm: DigestAlgorithm, hex: some StringProtocol) throws(VerificationError) {
        let text = Substring(hex).trimmingWhitespace
        guard !text.isEmpty else { throw VerificationError(.emptyChecksum, "the \(algorithm) digest is empty") }
        self.algorithm = algorithm
        digest = try DigestText.decodeHex(text, for: algorithm)
    }

    /// Creates a checksum from a standard base64 digest (padding optional).
    ///
    /// - Throws: ``VerificationError/Code/invalidBase64``, ``VerificationError/Code/wrongDigestLength``
    ///   or ``VerificationError/Code/emptyChecksum``.
    public init(_ algorithm: DigestAlgorithm, base64: some StringProtocol) throws(VerificationError) {
        let text = Substring(base64).trimmingWhitespace
        guard !text.isEmpty else { throw VerificationError(.emptyChecksum, "the \(algorithm) digest is empty") }
        self.algorithm = algorithm
        digest = try DigestText.decodeBase64(text, for: algorithm)
    }

    /// Reads `algorithm=digest` or `algorithm:digest`, the digest in hex, bare base64 (RFC 3230)
    /// or `:base64:` (RFC 9530); white space around the parts is ignored.
    ///
    /// - Throws: ``VerificationError`` with ``VerificationError/Code/emptyChecksum``,
    ///   ``VerificationError/Code/malformedChecksum`` (no `=` or `:`, or no algorithm),
    ///   ``VerificationError/Code/unsupportedAlgorithm``, ``VerificationError/Code/invalidHex``,
    ///   ``VerificationError/Code/invalidBase64`` or ``VerificationError/Code/wrongDigestLength``.
    public init(parsing text: some StringProtocol) throws(VerificationError) {
        let whole = Substring(text).trimmingWhitespace
        guard !whole.isEmpty else {
            throw VerificationError(.emptyChecksum, "the checksum is empty; write it as algorithm=hex, e.g. sha256=…")
        }
        guard let separator = whole.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
            throw VerificationError(
                .malformedChecksum,
                "\(VerificationError.quoted(whole)) has no \"=\" or \":\" between an algorithm and a digest; "
                    + "write it as e.g. sha256=<64 hex digits>")
        }
        let name = whole[..<separator].trimmingWhitespace
        let value = whole[whole.index(after: separator)...].trimmingWhitespace
        guard !name.isEmpty else {
            throw VerificationError(
                .malformedChecksum,
                "\(VerificationError.quoted(whole)) names no algorithm; write it as e.g. sha256=<64 hex digits>")
        }
        guard let algorithm = DigestAlgorithm(name: name) else {
            throw VerificationError(
                .unsupportedAlgorithm,
                "unknown algorithm \(VerificationError.quoted(name, limit: 32)); supported: \(DigestAlgorithm.supportedNames)"
            )
        }
        guard !value.isEmpty else {
            throw VerificationError(.emptyChecksum, "no digest after \(VerificationError.quoted(whole[...separator]))")
        }
        try self.init(algorithm, encodedDigest: value)
    }

    /// Reads a digest given apart from its algorithm: hex, bare base64 or `:base64:`.
    ///
    /// - Throws: as ``init(parsing:)`` does for the digest part.
    public init(_ algorithm: DigestAlgorithm, encodedDigest text: some StringProtocol) throws(VerificationError) {
        let value = Substring(text).trimmingWhitespace
        let utf8 = value.utf8
        let hexLength = 2 * algorithm.byteCount
        let base64Length = DigestText.base64Length(of: algorithm.byteCount)
        let unpaddedBase64Length = (4 * algorithm.byteCount + 2) / 3
        if utf8.count >= 2, value.first == ":", value.last == ":" {
            // An RFC 8941 byte sequence, as RFC 9530's Repr-Digest and Content-Digest carry it.
            let inner = value.dropFirst().dropLast()
            guard !inner.isEmpty else {
                throw VerificationError(.emptyChecksum, "the \(algorithm) digest \"::\" is empty")
            }
            try self.init(algorithm, base64: inner)
        } else if utf8.count == hexLength, DigestText.isHex(utf8) {
            try self.init(algorithm, hex: value)
        } else if utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "=") }
        ) {
            // Only base64 has these characters: whatever is wrong, it is wrong as base64.
            try self.init(algorithm, base64: value)
        } else if utf8.count != hexLength, utf8.count == base64Length || utf8.count == unpaddedBase64Length,
            !DigestText.isHex(utf8), DigestText.looksLikeBase64(utf8)
        {
            try self.init(algorithm, base64: value)
        } else {
            // Hex of the wrong length, or hex with a typo: say which.
            try self.init(algorithm, hex: value)
        }
    }

    /// The digest in lower-case hex.
    public var hex: String { digest.hexString }

    /// The digest in standard, padded base64.
    public var base64: String { DigestText.encodeBase64(digest) }

    /// Whether `bytes` is this checksum's digest.
    public func matches(_ bytes: [UInt8]) -> Bool { bytes == digest }

    /// `algorithm=hex`, e.g. `sha256=9f86d0…`: the form ``init(parsing:)`` reads and the CLI takes.
    public var description: String { "\(algorithm)=\(hex)" }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(parsing: text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension Substring {
    /// The substring without leading and trailing white space (spaces, tabs, line ends).
    var trimmingWhitespace: Substring {
        var result = self
        while let first = result.first, first.isWhitespace { result.removeFirst() }
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }
}
