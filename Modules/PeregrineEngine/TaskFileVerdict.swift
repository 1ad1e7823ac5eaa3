import PeregrineChecksums
import PeregrineCore

/// What a ``TaskFileVerifier`` says about a complete download: whether it may be renamed into
/// place, and the `VerificationResult` to keep beside the task's state.
public struct TaskFileVerdict: Sendable, Hashable {
    /// What is known about the file's checksum now.
    public var result: VerificationResult
    /// Nil when the file may be renamed into place, else why not
    /// (`FailureReason.Code.verification`).
    public var failure: FailureReason?

    /// Creates a verdict.
    public init(result: VerificationResult, failure: FailureReason?) {
        self.result = result
        self.failure = failure
    }

    /// The file matched its checksum.
    public static let verified = TaskFileVerdict(result: .verified, failure: nil)

    /// Nothing was checked (no checksum); the file may be placed.
    public static let unverified = TaskFileVerdict(result: .unverified, failure: nil)

    /// Whether the file's digest differs from the expected one (rather than not computed).
    public var isMismatch: Bool {
        if case .mismatch = result { return true }
        return false
    }
}
