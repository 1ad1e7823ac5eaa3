import PeregrineCore

/// What is known about a file's checksum: the value the engine keeps beside a task's state.
///
/// `Codable` with stable keys (`unverified`, `verified`, `mismatch` with `expected` and
/// `actual` as `algorithm=hex` strings), so it can be persisted with the task record.
public enum VerificationResult: Sendable, Hashable, Codable, CustomStringConvertible {
    /// No checksum was expected, or the file was not checked (yet).
    case unverified
    /// The file's digest equals the expected checksum.
    case verified
    /// The file's digest differs; `actual` is of the same algorithm as `expected`.
    case mismatch(expected: Checksum, actual: Checksum)

    /// Compares a computed checksum with the expected one.
    ///
    /// - Throws: ``VerificationError/Code/algorithmMismatch`` when the two use different algorithms.
    public init(expected: Checksum, actual: Checksum) throws(VerificationError) {
        guard expected.algorithm == actual.algorithm else {
            throw VerificationError(
                .algorithmMismatch,
                "cannot compare a \(expected.algorithm) checksum with a \(actual.algorithm) digest")
        }
        self = expected.digest == actual.digest ? .verified : .mismatch(expected: expected, actual: actual)
    }

    /// Whether the file was checked and matched.
    public var isVerified: Bool { self == .verified }

    /// The failure a mismatch makes of a task (`failed(.verification)`), or nil when there was none.
    public var failureReason: FailureReason? {
        guard case .mismatch = self else { return nil }
        return FailureReason(.verification, message: description)
    }

    /// One line for people: "verified", "unverified", or
    /// "sha256 mismatch: expected 9f86…, actual 2c26…".
    public var description: String {
        switch self {
        case .unverified: "unverified"
        case .verified: "verified"
        case .mismatch(let expected, let actual):
            "\(expected.algorithm) mismatch: expected \(expected.hex), actual \(actual.hex)"
        }
    }
}
