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

/// Where persisted custom thumbnails are kept: one image file per task, named by a hash of the
/// task key, written to a temporary name, synced and renamed into place.
public struct CustomThumbnailDirectory: Sendable, Hashable {
    /// The directory; created on first write.
    public let path: String

    /// A directory at `path`.
    public init(path: String) {
        self.path = path
    }

    /// Writes `thumbnail` for `taskKey`, replacing an earlier one, and returns its index entry.
    ///
    /// - Throws: ``ThumbnailError/Code/storageFailed``.
    public func write(_ thumbnail: Thumbnail, forTask taskKey: String) throws -> CustomThumbnailIndex.Entry {
        let fileName = StableHash.hex(taskKey) + (thumbnail.format == .png ? ".png" : ".jpg")
        let target = filePath(fileName)
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let temporary = target + ".tmp-\(UUID().uuidString)"
            guard FileManager.default.createFile(atPath: temporary, contents: thumbnail.data) else {
                throw ThumbnailError(.storageFailed, "cannot write \(temporary)")
            }
            let written = open(temporary, O_WRONLY | O_CLOEXEC)
            if written >= 0 {
                fsync(written)
                close(written)
            }
            guard rename(temporary, target) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(atPath: temporary)
                throw ThumbnailError(.storageFailed, "cannot rename into \(target): \(reason)")
            }
            let directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directory >= 0 {
                fsync(directory)
                close(directory)
            }
        } catch let error as ThumbnailError {
            throw error
        } catch {
            throw ThumbnailError(.storageFailed, "cannot write \(target): \(error)")
        }
        return CustomThumbnailIndex.Entry(
            fileName: fileName, width: thumbnail.width, height: thumbnail.height, pixelFormat: thumbnail.pixelFormat,
            format: thumbnail.format, contentIdentifier: Self.contentIdentifier(thumbnail.data))
    }

    /// Reads the thumbnail an entry names.
    ///
    /// - Throws: ``ThumbnailError/Code/unreadableFile`` when it is gone,
    ///   ``ThumbnailError/Code/corruptImage`` when it is not what the entry says.
    public func read(_ entry: CustomThumbnailIndex.Entry) throws -> Thumbnail {
        guard Self.isPlainFileName(entry.fileName) else {
            throw ThumbnailError(.unreadableFile, "\(entry.fileName) is not a file name inside \(path)")
        }
        let bytes = try SourceFile.read(filePath(entry.fileName), maximumBytes: 64 << 20)
        guard ImageFormat(sniffing: bytes) == entry.format else {
            throw ThumbnailError(.corruptImage, "\(entry.fileName) is not the \(entry.format.rawValue) it should be")
        }
        return Thumbnail(
            uncheckedWidth: entry.width, height: entry.height, pixelFormat: entry.pixelFormat, format: entry.format,
            data: Data(bytes))
    }

    /// Whether the entry's file exists.
    ///
    /// An entry whose name is not a plain file name (a path, `..`: a damaged or edited store) never
    /// exists, so restoring drops it.
    public func contains(_ entry: CustomThumbnailIndex.Entry) -> Bool {
        Self.isPlainFileName(entry.fileName) && FileManager.default.fileExists(atPath: filePath(entry.fileName))
    }

    /// Deletes the entry's file; never a file outside the directory.
    public func remove(_ entry: CustomThumbnailIndex.Entry) {
        guard Self.isPlainFileName(entry.fileName) else { return }
        try? FileManager.default.removeItem(atPath: filePath(entry.fileName))
    }

    /// Whether `name` names a file directly inside the directory: not empty, no separator, not `.`
    /// or `..`, no NUL.
    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0")
    }

    /// Deletes the image files no entry of `index` names (after a store was reset, say).
    public func removeFiles(notIn index: CustomThumbnailIndex) {
        let kept = Set(index.entries.values.map(\.fileName))
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names where !kept.contains(name) && (name.hasSuffix(".png") || name.hasSuffix(".jpg")) {
            try? FileManager.default.removeItem(atPath: filePath(name))
        }
    }

    func filePath(_ fileName: String) -> String {
        PathText.join(path, fileName)
    }

    static func contentIdentifier(_ data: Data) -> String {
        StableHash.hex([UInt8](data))
    }
}
