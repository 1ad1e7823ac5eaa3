import PeregrineCore
import PeregrineStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive `flock` on a store's lock file, so that two processes (or two store objects)
/// never write one file set at once. The kernel releases it when the process dies.
package final class StoreLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock, or throws ``StoreError/Code/locked`` when someone else holds it.
    package init(path: String) throws(StoreError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StoreFiles.error(errno, path: path, "cannot open the lock file") }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(descriptor)
            if code == EWOULDBLOCK {
                throw StoreError(
                    .locked, path: path, "another process (or store object) has this store open; close it first")
            }
            throw StoreFiles.error(code, path: path, "cannot lock")
        }
        self.descriptor = descriptor
    }

    /// Releases the lock: unlocked first, then closed. A child process forked by another
    /// thread and not yet at its `exec` shares the descriptor's open file (`O_CLOEXEC` closes it
    /// only at the `exec`), and closing alone would leave the lock held until then, so that a
    /// store reopened at once was refused as locked.
    deinit {
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
