/// What the engine does when a download's checksum does not match: retry from byte zero a
/// few times, then fail the task with `failed(.verification)`.
///
/// Reed's rule is the default: up to 3 attempts in all (the first download and 2 retries).
/// The engine keeps one policy per manager and lets a task override it; it counts attempts
/// itself and asks ``decision(afterMismatchOnAttempt:)`` after each mismatch.
///
/// A retry always starts from zero — no `Range` request, the temporary file truncated, the
/// resume record dropped — because the bytes on disk are what failed. Mismatches are retried
/// only when the bytes were hashed in full; a hashing error (``VerificationError``) is not a
/// mismatch and is handled like any other failure.
public struct VerificationRetryPolicy: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How many times a download runs in all before a mismatch fails the task; at least 1
    /// (1: never retry).
    public var maxAttempts: Int {
        didSet { maxAttempts = max(maxAttempts, 1) }
    }
    /// What becomes of the file of the last, failed attempt.
    public var mismatchedFile: MismatchedFilePolicy

    /// Creates a policy; `maxAttempts` below 1 counts as 1.
    public init(maxAttempts: Int = 3, mismatchedFile: MismatchedFilePolicy = .keepAside) {
        self.maxAttempts = max(maxAttempts, 1)
        self.mismatchedFile = mismatchedFile
    }

    /// Reed's rule: up to 3 attempts, from zero; the last mismatched file kept aside.
    public static let `default` = VerificationRetryPolicy()

    /// One attempt: a mismatch fails the task at once.
    public static let never = VerificationRetryPolicy(maxAttempts: 1)

    /// What to do once an attempt ended with a mismatch.
    public enum Decision: Sendable, Hashable {
        /// Download again from byte zero; `attempt` is the number of the attempt to start (2, 3, …).
        case retryFromZero(attempt: Int)
        /// Give up: fail the task with `failed(.verification)` and apply ``VerificationRetryPolicy/mismatchedFile``.
        case fail
    }

    /// The decision after attempt number `attempt` (1 for the first download) did not match.
    public func decision(afterMismatchOnAttempt attempt: Int) -> Decision {
        attempt < maxAttempts ? .retryFromZero(attempt: max(attempt, 0) + 1) : .fail
    }

    public var description: String {
        "up to \(maxAttempts) attempt\(maxAttempts == 1 ? "" : "s"), then \(mismatchedFile)"
    }
}
