import Foundation
import PeregrineVerification

/// SHA-256 digests of files, read in 1 MiB pieces.
enum FileDigest {
    /// The SHA-256 of the file at `path`, in lower-case hex.
    static func sha256(ofFileAt path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        var hasher = try StreamingHasher(.sha256)
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(chunk)
        }
        return hasher.finalize().hexString
    }

    /// The size of the file at `path` in bytes, or nil when there is no such file.
    static func size(ofFileAt path: String) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return (attributes[.size] as? NSNumber)?.int64Value
    }
}
