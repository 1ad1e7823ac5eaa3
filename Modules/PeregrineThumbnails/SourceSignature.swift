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

/// A file's size and modification time: enough to notice that a cached thumbnail was made from a
/// different file than the one now at the path.
public struct SourceSignature: Sendable, Hashable, Codable {
    /// The size in bytes.
    public var size: Int64
    /// The modification time in nanoseconds since 1970.
    public var modificationTime: Int64

    /// A signature with the given values.
    public init(size: Int64, modificationTime: Int64) {
        self.size = size
        self.modificationTime = modificationTime
    }

    /// The signature of things that are not files (custom thumbnails).
    public static let none = SourceSignature(size: -1, modificationTime: 0)

    /// The signature of the regular file at `path`, or `nil` when there is none (missing, a
    /// directory, unreadable metadata).
    public init?(ofFileAtPath path: String) {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        #if os(Linux)
            let time = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        #else
            let time = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        #endif
        self.init(size: Int64(info.st_size), modificationTime: time)
    }
}
