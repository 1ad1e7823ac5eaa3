import Foundation
import PeregrineStorage
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A closed store releases its lock at once, even while a child process forked by another
/// thread still shares the lock's descriptor (as one does between `fork` and `exec`: the
/// descriptor is `O_CLOEXEC`, closed only at the `exec`). Before the lock was unlocked
/// explicitly, reopening in that window failed with `locked` — seen in CI under load.
@Suite struct StoreLockReleaseTests {
    @Test(arguments: StoreBackend.allCases)
    func aClosedStoreCanBeReopenedWhileAForkedChildHoldsItsDescriptors(_ backend: StoreBackend) async throws {
        try await withTemporaryDirectory { root in
            let store = try backend.open(root)
            try store.record([.putList(StoredList(identifier: "", sections: [["https://example.com/a"]]))])
            // The child inherits every descriptor, the lock's among them, and only sleeps: it
            // calls nothing but async-signal-safe functions before it exits.
            let child = fork()
            if child == 0 {
                usleep(3_000_000)
                _exit(0)
            }
            try #require(child > 0, "fork failed: \(errno)")
            defer {
                kill(child, SIGKILL)
                var status: Int32 = 0
                waitpid(child, &status, 0)
            }
            try store.close()
            let reopened = try backend.open(root)
            defer { try? reopened.close() }
            #expect(try reopened.load().lists[""]?.sections == [["https://example.com/a"]])
        }
    }
}
