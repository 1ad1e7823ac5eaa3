import PeregrineCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive lock on a partial file, held by one transfer from before it cuts or first
/// writes the file until the file is placed or left for a resume. Another writer — a second
/// service of a fleet whose lease looked expired, a second program on the same directory —
/// finds the file busy and neither cuts, writes nor places it meanwhile, whatever its leases
/// say.
///
/// A `flock` lock belongs to the open file description, not to the process: two transfers in
/// one process exclude each other too, and a crash releases it. It lasts while any descriptor
/// of that description is open — the sink's own, which this one duplicates, too — so releasing
/// unlocks before it closes.
final class PartFileLock: Sendable {
    private let descriptor: Atomic<Int32>

    /// What asking for the lock gave.
    enum Taken {
        case locked(PartFileLock)
        /// Another open file description holds it.
        case busy
        /// `flock` failed with this errno.
        case failed(Int32)
    }

    /// Locks the file `descriptor` is open on. The lock owns the descriptor; when none is
    /// taken, the descriptor is closed.
    static func take(_ descriptor: Int32) -> Taken {
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            _ = close(descriptor)
            return code == EWOULDBLOCK ? .busy : .failed(code)
        }
        return .locked(PartFileLock(descriptor))
    }

    /// ``take(_:)`` for the directory's operations: nil when busy.
    fileprivate static func take(_ descriptor: Int32, path: String) throws(FailureReason) -> PartFileLock? {
        switch take(descriptor) {
        case .locked(let lock): return lock
        case .busy: return nil
        case .failed(let code): throw DownloadDirectory.failure(code, "cannot lock \(path)")
        }
    }

    private init(_ descriptor: Int32) { self.descriptor = Atomic(descriptor) }

    deinit { release() }

    /// Ends the lock (unlocking and closing the descriptor); later calls do nothing.
    func release() {
        let fd = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        guard fd >= 0 else { return }
        // Closing alone would leave the lock to the sink's descriptor until that one closes,
        // and a resumed transfer would find its own file busy.
        _ = flock(fd, LOCK_UN)
        _ = close(fd)
    }

    /// Why a transfer did not start: another writer holds the partial file.
    static func busy(_ path: String) -> FailureReason {
        FailureReason(
            .partFileBusy,
            message: "another process is writing \(path) (it holds the file's lock); trying again later")
    }
}

extension DownloadDirectory {
    /// Removes the partial file `name` for a fresh start, unless another writer holds its lock
    /// (then nothing is touched and the result is false). A missing file is removed already.
    func removeUnlessLocked(_ name: String) throws(FailureReason) -> Bool {
        guard let full = location(of: name) else { throw Self.unsafe(name) }
        let fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return true }
            // A symbolic link or an unreadable file: not a writer's partial file; the name goes.
            return remove(name)
        }
        guard let lock = try PartFileLock.take(fd, path: full) else { return false }
        // Unlinked while locked: a writer that opens the name later gets a new file.
        defer { lock.release() }
        return remove(name)
    }

    /// Creates (or empties) and locks the partial file `name` for a fresh start; nil when
    /// another writer holds it, with nothing touched.
    func createLocked(_ name: String) throws(FailureReason) -> PartFileLock? {
        guard let full = location(of: name) else { throw Self.unsafe(name) }
        let fd = open(full, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw Self.failure(errno, "cannot create \(full)") }
        guard let lock = try PartFileLock.take(fd, path: full) else { return nil }
        guard ftruncate(fd, 0) == 0 else {
            lock.release()
            throw Self.failure(errno, "cannot truncate \(full)")
        }
        return lock
    }

    /// What claiming a partial file for a resume found.
    enum ResumeClaim {
        /// Locked and cut to the length asked for.
        case locked(PartFileLock)
        /// Another writer holds it; nothing was cut.
        case busy
        /// It holds fewer bytes than the record counts (or is gone): the resume would read
        /// bytes that are not there.
        case short(Int64)
    }

    /// Locks the partial file `name` and cuts it to `length` bytes, for a resume.
    func claimForResume(_ name: String, length: Int64) throws(FailureReason) -> ResumeClaim {
        guard let full = location(of: name) else { throw Self.unsafe(name) }
        let fd = open(full, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return .short(0) }
            throw Self.failure(errno, "cannot open \(full)")
        }
        guard let lock = try PartFileLock.take(fd, path: full) else { return .busy }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            lock.release()
            throw Self.failure(errno, "cannot read the size of \(full)")
        }
        guard Int64(status.st_size) >= length else {
            lock.release()
            return .short(Int64(status.st_size))
        }
        guard ftruncate(fd, off_t(length)) == 0 else {
            lock.release()
            throw Self.failure(errno, "cannot truncate \(full)")
        }
        return .locked(lock)
    }
}
