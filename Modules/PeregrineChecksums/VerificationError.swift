import PeregrineCore

/// Why a digest could not be computed, a checksum could not be read, or a file could not be verified.
///
/// A struct with static codes (as in swift-nio's `FileSystemError`) so that the set can grow.
/// ``message`` says what happened and, where it helps, what to do; it is at most 500
/// characters, and echoes of the offending input are cut short. A *mismatch* is not an error:
/// it is a ``VerificationResult``.
public struct VerificationError: PeregrineError {
    /// A kind of failure.
    public struct Code: PeregrineErrorCode {
        public let name: String

        /// The algorithm is unknown, or the digest provider does not offer it.
        public static let unsupportedAlgorithm = Code(name: "unsupported algorithm")
        /// The digest provider (OpenSSL) reported an error.
        public static let openSSL = Code(name: "OpenSSL error")
        /// The file could not be opened or read.
        public static let unreadableFile = Code(name: "unreadable file")
        /// The checksum text was empty, or had an empty digest.
        public static let emptyChecksum = Code(name: "empty checksum")
        /// The checksum text was not `algorithm=digest` (or `algorithm:digest`).
        public static let malformedChecksum = Code(name: "malformed checksum")
        /// A hex digest held a character that is not a hexadecimal digit.
        public static let invalidHex = Code(name: "invalid hex digest")
        /// A base64 digest held a character outside the base64 alphabet, or bad padding.
        public static let invalidBase64 = Code(name: "invalid base64 digest")
        /// The digest has the wrong length for its algorithm.
        public static let wrongDigestLength = Code(name: "wrong digest length")
        /// A line of a checksum list (`SHA256SUMS`) could not be read; ``VerificationError/line`` says which.
        public static let malformedChecksumList = Code(name: "malformed checksum list")
        /// A checksum list has no entry for the file asked for.
        public static let noChecksumForFile = Code(name: "no checksum for file")
        /// A checksum file (`.sha256`, `SHA256SUMS`) could not be fetched: an HTTP error, a
        /// network failure, or more bytes than a checksum file has.
        public static let checksumFileUnavailable = Code(name: "checksum file unavailable")
        /// There is nothing to verify: the task is unknown, not finished, or has no checksum.
        public static let nothingToVerify = Code(name: "nothing to verify")
        /// A checksum of one algorithm was compared with a digest of another.
        public static let algorithmMismatch = Code(name: "algorithm mismatch")
        /// A ``HashingSink`` was written out of order (a gap or a rewind): its digest would not
        /// be the file's, so it gives none. Verify the finished file instead.
        public static let nonContiguousWrite = Code(name: "non-contiguous write")
        /// The sink a ``HashingSink`` wraps failed to write, so the digest does not describe what was stored.
        public static let downstreamWriteFailed = Code(name: "wrapped sink failed")
        /// A ``HashingSink`` was used out of order: written to or primed after it finished, or
        /// primed after its first write.
        public static let invalidUse = Code(name: "invalid use")
    }

    /// What kind of failure.
    public var code: Code
    /// What happened, with OpenSSL's own message when it gave one; at most 500 characters.
    public var message: String
    /// The 1-based line of a checksum list the error is about, when it is about one (the
    /// message then says "line N: …").
    public var line: Int?

    /// Creates an error; a message longer than 500 characters is cut short.
    public init(_ code: Code, _ message: String, line: Int? = nil) {
        self.code = code
        self.message = message.count > 500 ? String(message.prefix(500)) + "…" : message
        self.line = line
    }

    /// `text` quoted for a message, cut to `limit` characters, with control characters escaped.
    static func quoted(_ text: some StringProtocol, limit: Int = 64) -> String {
        var shown = ""
        for character in text.prefix(limit) {
            if character.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) {
                shown.append(character)
            } else {
                shown += character.unicodeScalars.map { "\\u{\(String($0.value, radix: 16))}" }.joined()
            }
        }
        return "\"\(shown)\(text.count > limit ? "…" : "")\""
    }
}
