import Foundation
import PeregrineVerification

/// Files of random bytes for a server to serve.
enum RandomFile {
    /// Writes `size` bytes from `/dev/urandom` to `path` and returns their SHA-256 (hex).
    ///
    /// The bytes go to a temporary name beside `path` first and are renamed into place, so a
    /// server serving `path` sees either the old file or the complete new one. With
    /// `modificationDate`, the new file gets that modification time (nginx builds its ETag from
    /// the time and the size, so a replacement in the same second needs one).
    @discardableResult
    static func write(size: Int, to path: String, modificationDate: Date? = nil) throws -> String {
        let partial = path + ".writing"
        guard let source = FileHandle(forReadingAtPath: "/dev/urandom") else {
            throw CocoaError(.fileReadNoPermission, userInfo: [NSFilePathErrorKey: "/dev/urandom"])
        }
        defer { try? source.close() }
        guard FileManager.default.createFile(atPath: partial, contents: nil),
            let target = FileHandle(forWritingAtPath: partial)
        else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: partial])
        }
        var hasher = try StreamingHasher(.sha256)
        do {
            defer { try? target.close() }
            var remaining = size
            while remaining > 0 {
                let chunk = try source.read(upToCount: min(remaining, 1 << 20)) ?? Data()
                guard !chunk.isEmpty else { throw CocoaError(.fileReadUnknown) }
                hasher.update(chunk)
                try target.write(contentsOf: chunk)
                remaining -= chunk.count
            }
        }
        if let modificationDate {
            try FileManager.default.setAttributes([.modificationDate: modificationDate], ofItemAtPath: partial)
        }
        guard rename(partial, path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        return hasher.finalize().hexString
    }
}
