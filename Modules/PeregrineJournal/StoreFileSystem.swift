import PeregrineCore
import PeregrineStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls a store writes through, replaceable so that tests inject faults (a full
/// disk after N bytes) deterministically, without mounting anything.
package struct StoreFileSystem: Sendable {
    /// `write(2)`: bytes written, or -1 with `errno` set.
    package var write: @Sendable (Int32, UnsafeRawPointer, Int) -> Int
    /// `fdatasync(2)`/`fsync(2)`: 0, or -1 with `errno` set.
    package var sync: @Sendable (Int32) -> Int32

    package init(
        write: @escaping @Sendable (Int32, UnsafeRawPointer, Int) -> Int,
        sync: @escaping @Sendable (Int32) -> Int32
    ) {
        self.write = write
        self.sync = sync
    }

    /// The real system calls.
    package static let posix = StoreFileSystem(
        write: { descriptor, bytes, count in
            #if canImport(Glibc) || canImport(Musl)
                Glibc.write(descriptor, bytes, count)
            #else
                Darwin.write(descriptor, bytes, count)
            #endif
        },
        sync: { descriptor in
            #if canImport(Darwin)
                fsync(descriptor)
            #else
                fdatasync(descriptor)
            #endif
        })
}

/// POSIX helpers shared by the stores: whole writes, syncs, atomic replacement, mapping.
package enum StoreFiles {
    /// The error for a failed system call, `.diskFull` for ENOSPC and EDQUOT.
    package static func error(_ code: Int32, path: String, _ action: String) -> StoreError {
        let reason = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT {
            return StoreError(
                .diskFull, path: path, "\(action): \(reason); what was stored before is intact, free space and retry")
        }
        return StoreError(.ioFailed, path: path, "\(action): \(reason)")
    }

    /// Writes every byte, retrying on EINTR and short writes.
    package static func writeAll(
        _ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String, fileSystem: StoreFileSystem
    ) throws(StoreError) {
        guard var pointer = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = fileSystem.write(descriptor, pointer, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                throw error(errno, path: path, "cannot write")
            }
            if written == 0 { throw error(EIO, path: path, "cannot write") }
            pointer += written
            remaining -= written
        }
    }

    /// Writes every byte of an array.
    package static func writeAll(
        _ descriptor: Int32, _ bytes: [UInt8], path: String, fileSystem: StoreFileSystem
    ) throws(StoreError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(StoreError) in try writeAll(descriptor, raw, path: path, fileSystem: fileSystem) }
        }
        try result.get()
    }

    /// Syncs a file's data.
    package static func sync(_ descriptor: Int32, path: String, fileSystem: StoreFileSystem) throws(StoreError) {
        while fileSystem.sync(descriptor) != 0 {
            if errno == EINTR { continue }
            throw error(errno, path: path, "cannot sync")
        }
    }

    /// Syncs a directory, so that a rename or a new file inside it survives a power cut.
    package static func syncDirectory(_ path: String) throws(StoreError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw error(errno, path: path, "cannot open the directory") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw error(errno, path: path, "cannot sync the directory") }
    }

    /// Creates a directory and its parents (mode 0700 for the ones it makes).
    package static func makeDirectories(_ path: String) throws(StoreError) {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0, errno != EEXIST {
                throw error(errno, path: partial, "cannot create the store directory")
            }
        }
    }

    /// The names in a directory.
    package static func names(in directory: String) throws(StoreError) -> [String] {
        guard let stream = opendir(directory) else { throw error(errno, path: directory, "cannot list") }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether a file exists.
    package static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }

    /// Copies a file (for keeping a damaged file before anything replaces it).
    package static func copy(_ source: String, to destination: String) throws(StoreError) {
        guard let file = try MappedFile(path: source) else { return }
        let descriptor = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw error(errno, path: destination, "cannot create") }
        defer { close(descriptor) }
        try file.withUnsafeBytes { (bytes) throws(StoreError) in
            try writeAll(descriptor, bytes, path: destination, fileSystem: .posix)
        }
        try sync(descriptor, path: destination, fileSystem: .posix)
    }
}

/// A whole file mapped read-only; nil from the initializer when the file does not exist.
package final class MappedFile {
    private let base: UnsafeMutableRawPointer?
    private let count: Int

    package init?(path: String) throws(StoreError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw StoreFiles.error(errno, path: path, "cannot open")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw StoreFiles.error(errno, path: path, "cannot stat") }
        count = Int(status.st_size)
        if count == 0 {
            base = nil
            return
        }
        let mapped = mmap(nil, count, PROT_READ, MAP_PRIVATE, descriptor, 0)
        guard let mapped, mapped != MAP_FAILED else { throw StoreFiles.error(errno, path: path, "cannot map") }
        madvise(mapped, count, MADV_SEQUENTIAL)
        base = mapped
    }

    deinit {
        if let base { munmap(base, count) }
    }

    /// Lets the pages before `offset` go from this process (they stay in the page cache): the
    /// mapping reads them again if they are touched.
    package func release(upTo offset: Int) {
        guard let base else { return }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let length = min(offset, count) / pageSize * pageSize
        if length > 0 { madvise(base, length, MADV_DONTNEED) }
    }

    package func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: base.map { UnsafeRawPointer($0) }, count: count))
    }
}
