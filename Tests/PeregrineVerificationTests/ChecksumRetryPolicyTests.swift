import Foundation
import PeregrineVerification
import Testing

/// The retry policy the engine asks after a mismatch, and what becomes of a mismatched file.
@Suite("Verification retry policy")
struct ChecksumRetryPolicyTests {
    @Test func defaultIsReedsThreeAttemptsFromZero() {
        let policy = VerificationRetryPolicy.default
        #expect(policy.maxAttempts == 3)
        #expect(policy.mismatchedFile == .keepAside)
        #expect(policy.decision(afterMismatchOnAttempt: 1) == .retryFromZero(attempt: 2))
        #expect(policy.decision(afterMismatchOnAttempt: 2) == .retryFromZero(attempt: 3))
        #expect(policy.decision(afterMismatchOnAttempt: 3) == .fail)
        #expect(policy.decision(afterMismatchOnAttempt: 4) == .fail)
    }

    @Test func neverFailsAtTheFirstMismatch() {
        #expect(VerificationRetryPolicy.never.decision(afterMismatchOnAttempt: 1) == .fail)
    }

    @Test func attemptsAreConfigurableAndNeverBelowOne() {
        var policy = VerificationRetryPolicy(maxAttempts: 5, mismatchedFile: .delete)
        #expect(policy.decision(afterMismatchOnAttempt: 4) == .retryFromZero(attempt: 5))
        #expect(policy.decision(afterMismatchOnAttempt: 5) == .fail)
        policy.maxAttempts = 0
        #expect(policy.maxAttempts == 1)
        #expect(VerificationRetryPolicy(maxAttempts: -3).maxAttempts == 1)
    }

    @Test func policyRoundTripsThroughJSON() throws {
        let policy = VerificationRetryPolicy(maxAttempts: 4, mismatchedFile: .delete)
        #expect(try JSONDecoder().decode(VerificationRetryPolicy.self, from: JSONEncoder().encode(policy)) == policy)
    }

    @Test func mismatchedFileIsKeptAsNameDotMismatchOrDeleted() {
        #expect(MismatchedFilePolicy.keepAside.asidePath(forDestination: "/d/f.iso") == "/d/f.iso.mismatch")
        #expect(MismatchedFilePolicy.delete.asidePath(forDestination: "/d/f.iso") == nil)
    }
}
