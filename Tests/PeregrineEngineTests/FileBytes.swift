#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reading and writing whole files with POSIX calls, and comparing large byte arrays.
enum FileBytes {
    struct IOError: Error, CustomStringConvertible {
        var description: String
    }

    /// Every byte of the file at `path`.
    static func read(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw IOError(description: "open \(path): errno \(errno)") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw IOError(description: "fstat \(path): errno \(errno)") }
        var result = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        try result.withUnsafeMutableBytes { raw in
            while done < raw.count {
                let got = pread(fd, raw.baseAddress! + done, raw.count - done, off_t(done))
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { throw IOError(description: "pread \(path) at \(done): \(got), errno \(errno)") }
                done += got
            }
        }
        return result
    }

    /// Creates or replaces the file at `path` with `bytes`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw IOError(description: "open \(path): errno \(errno)") }
        defer { close(fd) }
        var done = 0
        try bytes.withUnsafeBytes { raw in
            while done < raw.count {
                let written = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(done))
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw IOError(description: "pwrite \(path): errno \(errno)") }
                done += written
            }
        }
    }

    /// The index of the first byte where `a` and `b` differ (the shorter length if one is a
    /// prefix of the other), or nil when they are equal. Compares with `memcmp` so that tens of
    /// megabytes are quick in a debug build, and a failure names a position instead of
    /// printing both arrays.
    static func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> Int? {
        let common = min(a.count, b.count)
        let block = 1 << 16
        return a.withUnsafeBytes { a in
            b.withUnsafeBytes { b in
                var start = 0
                while start < common {
                    let count = min(block, common - start)
                    if memcmp(a.baseAddress! + start, b.baseAddress! + start, count) != 0 {
                        for index in start..<(start + count) where a[index] != b[index] { return index }
                    }
                    start += count
                }
                return a.count == b.count ? nil : common
            }
        }
    }
}
