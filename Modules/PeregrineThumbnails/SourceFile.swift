#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads whole files with plain POSIX calls, bounded in size. Files are read, never mapped: a
/// download may truncate its file while a thumbnail is made, which would kill a process that had
/// it mapped (SIGBUS).
enum SourceFile {
    /// The bytes of the regular file at `path`.
    ///
    /// - Throws: ``ThumbnailError/Code/unreadableFile`` (missing, a directory, permissions, I/O),
    ///   ``ThumbnailError/Code/fileTooLarge`` beyond `maximumBytes`.
    static func read(_ path: String, maximumBytes: Int) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ThumbnailError(.unreadableFile, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw ThumbnailError(.unreadableFile, "\(path) is not a regular file")
        }
        guard Int(info.st_size) <= maximumBytes else {
            throw ThumbnailError(.fileTooLarge, "\(path) has \(info.st_size) bytes, above the limit of \(maximumBytes)")
        }
        // The file may grow while read: never read more than the limit.
        var bytes = [UInt8](repeating: 0, count: max(Int(info.st_size), 0))
        var filled = 0
        while true {
            if filled == bytes.count {
                guard bytes.count < maximumBytes else { break }
                bytes.append(
                    contentsOf: repeatElement(0, count: min(max(bytes.count, 65_536), maximumBytes - bytes.count)))
            }
            let count = bytes.withUnsafeMutableBytes { raw in
                Glibc.read(descriptor, raw.baseAddress! + filled, raw.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw ThumbnailError(.unreadableFile, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        return bytes
    }
}
