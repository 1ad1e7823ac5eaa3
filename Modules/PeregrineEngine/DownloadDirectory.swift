import PeregrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The directory an engine downloads into, and every file operation it does there.
///
/// Names given to it must come from ``FileNameSanitizer`` (or ``temporaryName()``); each
/// operation checks again that the resolved path stays inside the directory and refuses it
/// otherwise. Existence checks never follow symbolic links, and placing a file never writes
/// through one.
public struct DownloadDirectory: Sendable, Hashable, CustomStringConvertible {
    /// The directory's absolute, resolved path (symbolic links resolved), without a trailing slash.
    public let path: String

    /// Uses `path` as the download directory, creating it (and its parents) when missing.
    ///
    /// - Throws: ``EngineError`` with ``EngineError/Code/directoryUnavailable``.
    public init(path: String) throws(EngineError) {
        guard !path.isEmpty else { throw EngineError(.directoryUnavailable, "the download directory path is empty") }
        try Self.makeDirectories(path)
        guard let resolved = Self.realPath(path) else {
            throw EngineError(.directoryUnavailable, "cannot resolve \(path): \(Self.errorText(errno))")
        }
        var status = stat()
        guard stat(resolved, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw EngineError(.directoryUnavailable, "\(resolved) is not a directory")
        }
        self.path = resolved
    }

    public var description: String { path }

    /// A fresh hidden name for a temporary file: `.peregrine-<16 random hex digits>.part`.
    public static func temporaryName() -> String {
        temporaryName(UInt64.random(in: 0...UInt64.max))
    }

    /// The hidden temporary name for a 64-bit value: `.peregrine-<16 hex digits>.part`.
    public static func temporaryName(_ value: UInt64) -> String {
        // Written in place: one allocation (every task takes a name).
        let prefix = ".peregrine-", suffix = ".part"
        let count = prefix.utf8.count + 16 + suffix.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            var index = 0
            for byte in prefix.utf8 {
                buffer[index] = byte
                index += 1
            }
            for shift in stride(from: 60, through: 0, by: -4) {
                let digit = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0xF
                buffer[index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
                index += 1
            }
            for byte in suffix.utf8 {
                buffer[index] = byte
                index += 1
            }
            return index
        }
    }

    /// The absolute path of `name` inside the directory, or nil when `name` is not a safe
    /// relative path: one component, or several separated by `/` (a file in a subdirectory),
    /// none of them empty, `.` or `..`, and no NUL — so no path ever leaves it lexically.
    public func location(of name: String) -> String? {
        var count = 0
        var dots = 0
        var total = 0
        for byte in name.utf8 {
            if byte == 0 { return nil }
            total += 1
            if byte == UInt8(ascii: "/") {
                guard Self.isPlainComponent(count: count, dots: dots) else { return nil }
                count = 0
                dots = 0
                continue
            }
            if byte == UInt8(ascii: ".") { dots += 1 }
            count += 1
        }
        guard Self.isPlainComponent(count: count, dots: dots), total < Self.maximumPathByteCount else { return nil }
        // The bytes copied into one allocation: appending three strings cost ~1,900 instructions.
        var path = path
        var name = name
        return path.withUTF8 { head in
            name.withUTF8 { tail in
                String(unsafeUninitializedCapacity: head.count + 1 + tail.count) { buffer in
                    _ = buffer.initialize(fromContentsOf: head)
                    buffer[head.count] = UInt8(ascii: "/")
                    _ = UnsafeMutableBufferPointer(rebasing: buffer[(head.count + 1)...]).initialize(
                        fromContentsOf: tail)
                    return head.count + 1 + tail.count
                }
            }
        }
    }

    /// Whether a component of `count` bytes, `dots` of them dots, is a plain name.
    private static func isPlainComponent(count: Int, dots: Int) -> Bool {
        count > 0 && count <= FileNameSanitizer.maximumByteCount && !(dots == count && count <= 2)
    }

    /// The longest relative path taken (Linux's `PATH_MAX` less room for the directory's own).
    static let maximumPathByteCount = 3072

    /// `subdirectory` as a relative path of plain names, repeated and trailing slashes dropped
    /// (`a//b/` is `a/b`); `""` for none; nil when it is no such path (absolute, a `.` or `..`
    /// component, NUL, too long).
    public static func normalizedSubdirectory(_ subdirectory: String) -> String? {
        guard !subdirectory.hasPrefix("/"), !subdirectory.contains("\0") else { return nil }
        let components = subdirectory.split(separator: "/", omittingEmptySubsequences: true)
        for component in components {
            let count = component.utf8.count
            let dots = component.utf8.count { $0 == UInt8(ascii: ".") }
            guard isPlainComponent(count: count, dots: dots) else { return nil }
        }
        let joined = components.joined(separator: "/")
        return joined.utf8.count < maximumPathByteCount ? joined : nil
    }

    /// Makes the folders of a relative `name` (`a/b/file`: `a`, then `a/b`) inside the
    /// directory. A component that exists must be a directory, not a symbolic link, so that
    /// nothing is placed outside the directory.
    func makeParents(of name: String) throws(FailureReason) {
        var relative = ""
        let components = name.split(separator: "/")
        for component in components.dropLast() {
            relative += (relative.isEmpty ? "" : "/") + component
            guard let full = location(of: relative) else { throw Self.unsafe(name) }
            var status = stat()
            if lstat(full, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFDIR else {
                    throw FailureReason(
                        .fileSystem, message: "\(full) is not a directory (a symbolic link is not followed)")
                }
                continue
            }
            if mkdir(full, 0o755) != 0, errno != EEXIST {
                throw Self.failure(errno, "cannot create the directory \(full)")
            }
            if lstat(full, &status) != 0 || status.st_mode & S_IFMT != S_IFDIR {
                throw FailureReason(.fileSystem, message: "\(full) is not a directory")
            }
        }
    }

    /// The folder part of a relative name (`a/b` of `a/b/file`), nil for a name in the
    /// directory itself.
    static func folder(of name: String) -> Substring? {
        name.lastIndex(of: "/").map { name[..<$0] }
    }

    /// Whether an entry of this name exists (a dangling symbolic link counts).
    public func exists(_ name: String) -> Bool {
        guard let full = location(of: name) else { return false }
        var status = stat()
        return lstat(full, &status) == 0
    }

    /// The size of a regular file of this name, or nil when there is none.
    public func size(of name: String) -> Int64? {
        guard let full = location(of: name) else { return nil }
        var status = stat()
        guard lstat(full, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(status.st_size)
    }

    /// The bytes an unprivileged process may still write to the directory's file system
    /// (`statvfs`'s `f_bavail × f_frsize`), or nil when the file system does not say.
    public func availableBytes() -> Int64? {
        var status = statvfs()
        guard statvfs(path, &status) == 0, status.f_frsize > 0 else { return nil }
        let (bytes, overflow) = Int64(clamping: status.f_bavail).multipliedReportingOverflow(
            by: Int64(clamping: status.f_frsize))
        return overflow ? Int64.max : bytes
    }

    /// Removes a file of this name; a missing file is not an error.
    @discardableResult
    public func remove(_ name: String) -> Bool {
        guard let full = location(of: name) else { return false }
        return unlink(full) == 0 || errno == ENOENT
    }

    /// Cuts (or extends) a file to `length` bytes, creating it when missing.
    func truncate(_ name: String, to length: Int64) throws(FailureReason) {
        guard let full = location(of: name) else { throw Self.unsafe(name) }
        let fd = open(full, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw Self.failure(errno, "cannot open \(full)") }
        defer { _ = close(fd) }
        guard ftruncate(fd, off_t(length)) == 0 else { throw Self.failure(errno, "cannot truncate \(full)") }
    }

    /// Creates an empty file (truncating one that exists), without following a symbolic link.
    func createEmpty(_ name: String) throws(FailureReason) {
        guard let full = location(of: name) else { throw Self.unsafe(name) }
        let fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw Self.failure(errno, "cannot create \(full)") }
        _ = close(fd)
    }

    /// The outcome of placing a finished file.
    enum Placement: Sendable, Hashable {
        /// The file is in place under `name`. When `keptTemporary` is true the temporary name
        /// is still a hard link to the same file: the caller removes it (with
        /// ``removeLeftoverLink(_:of:)``) once the task's record says where the file went, so
        /// that a process killed in between finds the placed file from its temporary name.
        case placed(String, keptTemporary: Bool)
        /// The name is taken and the policy is ``FileConflictPolicy/skip``; nothing moved.
        case skipped
    }

    /// Moves the temporary file `temporary` (or, when nil, a new empty file) to `name`,
    /// following `policy` when the name is taken.
    ///
    /// ``FileConflictPolicy/rename`` and ``FileConflictPolicy/skip`` never replace anything:
    /// the file is linked under the first free name (`link` fails on an existing name, so two
    /// threads or processes cannot both claim it) and the temporary name stays a second link
    /// to it until the caller removes it. On a file system without hard links the file is
    /// renamed with `RENAME_NOREPLACE`, which is just as exclusive. `counters` remembers the last
    /// number used per name, so a thousand files of the same name cost no quadratic search.
    func place(
        temporary: String?, as name: String, policy: FileConflictPolicy, counters: inout [String: Int]
    ) throws(FailureReason) -> Placement {
        guard location(of: name) != nil else { throw Self.unsafe(name) }
        if name.utf8.contains(UInt8(ascii: "/")) { try makeParents(of: name) }
        switch policy {
        case .replace:
            let source: String
            if let temporary {
                source = temporary
            } else {
                source = Self.temporaryName()
                try createEmpty(source)
            }
            try move(source, to: name)
            return .placed(name, keptTemporary: false)
        case .skip:
            if exists(name) { return .skipped }
            return try placeExclusively(temporary: temporary, as: name).map { .placed(name, keptTemporary: $0) }
                ?? .skipped
        case .rename:
            if let kept = try placeExclusively(temporary: temporary, as: name) {
                return .placed(name, keptTemporary: kept)
            }
            // A file in a folder is numbered in its own name: `a.b/c (1).txt`.
            let folder = Self.folder(of: name)
            let parts = FileNameParts(folder.map { String(name[name.index(after: $0.endIndex)...]) } ?? name)
            var number = counters[name] ?? 0
            while true {
                number += 1
                let candidate = folder.map { $0 + "/" + parts.numbered(number) } ?? parts.numbered(number)
                if let kept = try placeExclusively(temporary: temporary, as: candidate) {
                    counters[name] = number
                    return .placed(candidate, keptTemporary: kept)
                }
                if number > 1_000_000 { throw FailureReason(.fileSystem, message: "no free name for \(name)") }
            }
        }
    }

    /// Puts the file under `name` unless that name exists: nil when it does, else whether the
    /// temporary name is still a link to the placed file.
    private func placeExclusively(temporary: String?, as name: String) throws(FailureReason) -> Bool? {
        guard let target = location(of: name) else { throw Self.unsafe(name) }
        guard let temporary else {
            let fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd >= 0 {
                _ = close(fd)
                return false
            }
            if errno == EEXIST { return nil }
            throw Self.failure(errno, "cannot create \(target)")
        }
        guard let source = location(of: temporary) else { throw Self.unsafe(temporary) }
        if link(source, target) == 0 { return true }
        let code = errno
        if code == EEXIST { return nil }
        guard [EPERM, EXDEV, EMLINK, ENOTSUP, EOPNOTSUPP, ENOSYS].contains(code) else {
            throw Self.failure(code, "cannot link \(source) to \(target)")
        }
        // A file system without hard links: an exclusive rename.
        if renameNoReplace(source, target) == 0 { return false }
        if errno == EEXIST { return nil }
        throw Self.failure(errno, "cannot rename \(source) to \(target)")
    }

    /// `renameat2(…, RENAME_NOREPLACE)`: fails with `EEXIST` rather than replace `target`.
    private func renameNoReplace(_ source: String, _ target: String) -> Int32 {
        #if os(Linux)
            if let renameat2 = Self.renameat2 {
                // RENAME_NOREPLACE is 1 (<linux/fs.h>).
                return renameat2(AT_FDCWD, source, AT_FDCWD, target, 1)
            }
            // A C library without renameat2: check, then rename (the only race left is with
            // another process placing the same name on a file system without hard links).
            var status = stat()
            if lstat(target, &status) == 0 || errno != ENOENT {
                errno = EEXIST
                return -1
            }
            return rename(source, target)
        #else
            return renamex_np(source, target, UInt32(RENAME_EXCL))
        #endif
    }

    #if os(Linux)
        typealias RenameAt2 =
            @convention(c) (
                Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32
            ) -> Int32
        /// Glibc declares `renameat2` only under `_GNU_SOURCE`, which its Swift module does not
        /// set: the function is looked up once instead.
        static let renameat2: RenameAt2? = dlsym(nil, "renameat2").map { unsafeBitCast($0, to: RenameAt2.self) }
    #endif

    /// Removes `temporary` if it is still a hard link to the file placed as `name` (see
    /// ``Placement/placed(_:keptTemporary:)``); anything else under that name is left alone.
    func removeLeftoverLink(_ temporary: String, of name: String) {
        guard let link = location(of: temporary), let placed = location(of: name) else { return }
        var linkStatus = stat()
        var placedStatus = stat()
        guard lstat(link, &linkStatus) == 0, lstat(placed, &placedStatus) == 0,
            linkStatus.st_ino == placedStatus.st_ino, linkStatus.st_dev == placedStatus.st_dev
        else { return }
        _ = unlink(link)
    }

    /// The name under which the file at `temporary` was placed, when the temporary name is still
    /// one of its hard links (a process killed between placing a file and recording it): the
    /// `candidates` are tried first, then the whole directory is searched. Nil when the file has
    /// no other link here.
    func placedName(ofLeftoverLink temporary: String, candidates: [String]) -> String? {
        guard let link = location(of: temporary) else { return nil }
        var linkStatus = stat()
        guard lstat(link, &linkStatus) == 0, linkStatus.st_mode & S_IFMT == S_IFREG, linkStatus.st_nlink > 1 else {
            return nil
        }
        func isTwin(_ name: String) -> Bool {
            guard name != temporary, let full = location(of: name) else { return false }
            var status = stat()
            return lstat(full, &status) == 0 && status.st_ino == linkStatus.st_ino
                && status.st_dev == linkStatus.st_dev
        }
        if let found = candidates.first(where: isTwin) { return found }
        // The directory, and the folders the candidates name (a numbered name in a folder).
        var folders: [String] = [""]
        for candidate in candidates {
            if let folder = Self.folder(of: candidate).map(String.init), !folders.contains(folder) {
                folders.append(folder)
            }
        }
        for folder in folders {
            guard let full = folder.isEmpty ? path : location(of: folder), let stream = opendir(full) else { continue }
            defer { closedir(stream) }
            while let entry = readdir(stream) {
                guard UInt64(entry.pointee.d_ino) == UInt64(linkStatus.st_ino) else { continue }
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                let relative = folder.isEmpty ? name : folder + "/" + name
                if isTwin(relative) { return relative }
            }
        }
        return nil
    }

    /// Renames `source` to `name`, replacing what is there.
    func move(_ source: String, to name: String) throws(FailureReason) {
        guard let from = location(of: source), let target = location(of: name) else { throw Self.unsafe(name) }
        guard rename(from, target) == 0 else { throw Self.failure(errno, "cannot rename \(from) to \(target)") }
    }

    /// `fsync`s the directory, so that a rename survives a crash, and the folders inside it
    /// that files were placed in (with their parents, which hold the folders' own entries).
    func synchronize(folders: Set<String> = []) {
        var paths: Set<String> = [path]
        for folder in folders {
            var relative = Substring(folder)
            while true {
                if let full = location(of: String(relative)) { paths.insert(full) }
                guard let slash = relative.lastIndex(of: "/") else { break }
                relative = relative[..<slash]
            }
        }
        for directory in paths {
            let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            _ = fsync(fd)
            _ = close(fd)
        }
    }

    // MARK: Helpers

    private static func makeDirectories(_ path: String) throws(EngineError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                throw EngineError(.directoryUnavailable, "cannot create \(prefix): \(errorText(errno))")
            }
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    static func failure(_ code: Int32, _ what: String) -> FailureReason {
        FailureReason(code == ENOSPC ? .diskFull : .fileSystem, message: "\(what): \(errorText(code))")
    }

    static func unsafe(_ name: String) -> FailureReason {
        FailureReason(.fileSystem, message: "refused a file name that would leave the download directory: \(name)")
    }
}
