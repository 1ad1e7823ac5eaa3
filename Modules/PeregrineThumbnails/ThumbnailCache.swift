/// The hybrid thumbnail cache, in Kingfisher's shape: a ``ThumbnailMemoryStorage`` in front of an
/// optional ``ThumbnailDiskStorage``, each with its own `Config`.
///
/// Lookups accept a thumbnail made for a height within a tolerance of the one asked for (as
/// SDEDownloadManager did: one more than a few pixels off is made again). Thread-safe.
public final class ThumbnailCache: Sendable {
    /// The memory half.
    public let memoryStorage: ThumbnailMemoryStorage
    /// The disk half, when configured.
    public let diskStorage: ThumbnailDiskStorage?

    /// A cache with the given halves.
    public init(memory: ThumbnailMemoryStorage.Config = .init(), disk: ThumbnailDiskStorage.Config? = nil) {
        memoryStorage = ThumbnailMemoryStorage(config: memory)
        diskStorage = disk.map(ThumbnailDiskStorage.init(config:))
    }

    /// The heights tried for `key`: its own first, then 1, 2, … `tolerance` pixels off, below
    /// before above.
    static func candidateKeys(_ key: ThumbnailCacheKey, tolerance: Int) -> [ThumbnailCacheKey] {
        var keys = [key]
        for offset in stride(from: 1, through: max(0, tolerance), by: 1) {
            if key.targetHeight - offset >= 1 { keys.append(key.withTargetHeight(key.targetHeight - offset)) }
            keys.append(key.withTargetHeight(key.targetHeight + offset))
        }
        return keys
    }

    /// A thumbnail from memory for `key` or a height at most `tolerance` pixels off. Cheap
    /// enough for the caller's thread.
    public func memoryValue(forKey key: ThumbnailCacheKey, heightTolerance tolerance: Int = 0) -> Thumbnail? {
        if let exact = memoryStorage.value(forKey: key) { return exact }
        for candidate in Self.candidateKeys(key, tolerance: tolerance).dropFirst() {
            if let thumbnail = memoryStorage.value(forKey: candidate),
                abs(thumbnail.height - key.targetHeight) <= tolerance
            {
                return thumbnail
            }
        }
        return nil
    }

    /// A thumbnail from memory, else from disk (then kept in memory too), for `key` or a height
    /// at most `tolerance` pixels off. Disk hits must match `signature` when it is given. Does file
    /// I/O on a memory miss.
    public func value(
        forKey key: ThumbnailCacheKey, heightTolerance tolerance: Int = 0, signature: SourceSignature? = nil
    ) -> Thumbnail? {
        if let thumbnail = memoryValue(forKey: key, heightTolerance: tolerance) { return thumbnail }
        guard let diskStorage else { return nil }
        for candidate in Self.candidateKeys(key, tolerance: tolerance) {
            if let thumbnail = diskStorage.value(forKey: candidate, signature: signature),
                abs(thumbnail.height - key.targetHeight) <= tolerance
            {
                memoryStorage.store(thumbnail, forKey: candidate)
                return thumbnail
            }
        }
        return nil
    }

    /// Keeps `thumbnail` as `policy` says.
    ///
    /// - Throws: ``ThumbnailError/Code/storageFailed`` when the disk write fails (the memory copy
    ///   is kept regardless).
    public func store(
        _ thumbnail: Thumbnail, forKey key: ThumbnailCacheKey, signature: SourceSignature = .none,
        policy: ThumbnailCachePolicy = .memoryAndDisk
    ) throws {
        guard policy != .none else { return }
        memoryStorage.store(thumbnail, forKey: key)
        if policy == .memoryAndDisk, let diskStorage {
            try diskStorage.store(thumbnail, forKey: key, signature: signature)
        }
    }

    /// Forgets every thumbnail of `taskKey`, in memory and on disk.
    public func removeAll(forTask taskKey: String) {
        memoryStorage.removeAll(forTask: taskKey)
        diskStorage?.removeAll(forTask: taskKey)
    }

    /// Forgets everything, in memory and on disk.
    public func removeAll() {
        memoryStorage.removeAll()
        diskStorage?.removeAll()
    }
}
