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
/// never write one file set at once. The kernel releases it when the process dies, so only a
/// live process holds it; the holder writes its pid into the file, so that whoever is refused
/// can say which process holds the store.
package final class StoreLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock, or throws ``StoreError/Code/locked`` naming the process that holds it.
    package init(path: String) throws(StoreError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StoreFiles.error(errno, path: path, "cannot open the lock file") }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            defer { close(descriptor) }
            if code == EWOULDBLOCK { throw StoreError(.locked, path: path, Self.holderMessage(descriptor)) }
            throw StoreFiles.error(code, path: path, "cannot lock")
        }
        let pid = "\(getpid())\n"
        if ftruncate(descriptor, 0) == 0 {
            _ = pid.utf8CString.withUnsafeBufferPointer { pwrite(descriptor, $0.baseAddress, $0.count - 1, 0) }
        }
        self.descriptor = descriptor
    }

    /// Who holds the lock, from the pid the holder wrote: a process of this program (its name
    /// from `/proc`), this process itself (another store object), or unknown.
    private static func holderMessage(_ descriptor: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        let text = count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : ""
        guard let pid = Int32(text.trimmingNewlines), pid > 0 else {
            return "another process (or store object) has this store open; stop it first"
        }
        if pid == getpid() { return "another store object of this process has this store open; close it first" }
        var name = ""
        if let comm = fopen("/proc/\(pid)/comm", "r") {
            var line = [CChar](repeating: 0, count: 64)
            if fgets(&line, 64, comm) != nil {
                name =
                    String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    .trimmingNewlines
            }
            fclose(comm)
        }
        let who = name.isEmpty ? "process \(pid)" : "process \(pid) (\(name))"
        return "\(who) has this store open; stop it (kill \(pid)) or wait for it to end"
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

extension String {
    fileprivate var trimmingNewlines: String {
        var text = Substring(self)
        while let last = text.last, last == "\n" || last == " " { text.removeLast() }
        return String(text)
    }
}
