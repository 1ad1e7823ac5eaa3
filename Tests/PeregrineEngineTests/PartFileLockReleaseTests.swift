import Foundation
import TestSupport
import Testing

@testable import PeregrineEngine

/// A released part-file lock is free at once, even while the descriptor it was duplicated from
/// (a sink's, which closes later) is still open.
@Suite struct PartFileLockReleaseTests {
    @Test func aReleasedLockIsFreeWhileTheSinksDescriptorIsStillOpen() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-lock-release")
        defer { scratch.remove() }
        let path = scratch.path("f.part")
        let sink = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(sink >= 0)
        defer { close(sink) }
        let duplicate = fcntl(sink, F_DUPFD_CLOEXEC, 0)
        guard case .locked(let lock) = PartFileLock.take(duplicate) else {
            Issue.record("the first lock was refused")
            return
        }
        let other = open(path, O_RDWR | O_CLOEXEC)
        guard case .busy = PartFileLock.take(other) else {
            Issue.record("a second writer got the lock while the first held it")
            return
        }
        lock.release()
        let next = open(path, O_RDWR | O_CLOEXEC)
        guard case .locked(let again) = PartFileLock.take(next) else {
            Issue.record("the released lock stayed with the sink's open descriptor")
            return
        }
        again.release()
    }
}
