import PeregrineCore
import Synchronization

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

/// The disk half of the thumbnail cache: one file per thumbnail in a directory, least recently
/// used files deleted once the total size passes the limit.
///
/// Use is remembered in each file's modification time, so the order survives restarts. The
/// directory is scanned on first use. Files are written to a temporary name and renamed into
/// place, so a crash never leaves a half-written thumbnail; a damaged or foreign file is treated
/// as a miss and deleted. Thread-safe; calls do file I/O, so the thumbnailer makes them on its
/// worker threads, never on the caller's.
public final class ThumbnailDiskStorage: Sendable {
    /// Where and how much.
    public struct Config: Sendable, Hashable {
        /// The cache directory; created when missing. Peregrine owns every `*.thumb` file in it.
        public var directory: String
        /// The most bytes of cache files kept. Default: 100 MiB.
        public var sizeLimit: Int

        /// A configuration with the given values.
        public init(directory: String, sizeLimit: Int = 100 << 20) {
            self.directory = directory
            self.sizeLimit = sizeLimit
        }
    }

    private struct Entry {
        var size: Int
        var lastUse: Double
    }

    private struct State {
        var loaded = false
        var entries: [String: Entry] = [:]
        var totalSize = 0
        var clock = 0.0

        /// A use time later than every earlier one, even within one clock tick.
        mutating func tick() -> Double {
            clock = max(Date().timeIntervalSince1970, clock + 0.001)
            return clock
        }
    }

    /// The configuration.
    public let config: Config
    private let state = Locked(State())

    /// A storage over `config.directory` (nothing is read until first use).
    public init(config: Config) {
        self.config = config
    }

    /// The thumbnail stored for `key`, or `nil`; with a `signature`, only one made from a file with
    /// that signature. A hit becomes the most recently used.
    public func value(forKey key: ThumbnailCacheKey, signature: SourceSignature? = nil) -> Thumbnail? {
        let name = key.fileName
        guard
            state.withLock({
                loadIfNeeded(&$0); return $0.entries[name] != nil
            })
        else { return nil }
        let path = self.path(name)
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else {
            forget(name)
            return nil
        }
        guard let thumbnail = ThumbnailFileContainer.decode(data, key: key, signature: signature) else {
            if ThumbnailFileContainer.decode(data, key: key, signature: nil) == nil {
                // Damaged, or another key's file under a colliding name.
                try? FileManager.default.removeItem(atPath: path)
                forget(name)
            }
            return nil
        }
        let time = state.withLock { state -> Double in
            let time = state.tick()
            state.entries[name]?.lastUse = time
            return time
        }
        try? FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: time)], ofItemAtPath: path)
        return thumbnail
    }

    /// Stores `thumbnail` for `key`, then deletes least recently used files past the size limit.
    ///
    /// - Throws: ``ThumbnailError/Code/storageFailed`` when the directory or file cannot be written.
    public func store(_ thumbnail: Thumbnail, forKey key: ThumbnailCacheKey, signature: SourceSignature = .none) throws
    {
        let data = ThumbnailFileContainer.encode(thumbnail, key: key, signature: signature)
        guard data.count <= config.sizeLimit else { return }
        let name = key.fileName
        state.withLock { loadIfNeeded(&$0) }
        do {
            try FileManager.default.createDirectory(atPath: config.directory, withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: path(name)), options: .atomic)
        } catch {
            throw ThumbnailError(.storageFailed, "cannot write \(path(name)): \(error)")
        }
        let (evicted, time) = state.withLock { state -> ([String], Double) in
            let time = state.tick()
            state.totalSize += data.count - (state.entries[name]?.size ?? 0)
            state.entries[name] = Entry(size: data.count, lastUse: time)
            guard state.totalSize > config.sizeLimit else { return ([], time) }
            var evicted: [String] = []
            for (candidate, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard state.totalSize > config.sizeLimit else { break }
                if candidate == name { continue }
                state.entries[candidate] = nil
                state.totalSize -= entry.size
                evicted.append(candidate)
            }
            return (evicted, time)
        }
        for candidate in evicted { try? FileManager.default.removeItem(atPath: path(candidate)) }
        try? FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: time)], ofItemAtPath: path(name))
    }

    /// Deletes the file for `key`.
    public func removeValue(forKey key: ThumbnailCacheKey) {
        let name = key.fileName
        try? FileManager.default.removeItem(atPath: path(name))
        forget(name)
    }

    /// Deletes every file of `taskKey`'s thumbnails.
    public func removeAll(forTask taskKey: String) {
        let prefix = ThumbnailCacheKey.taskFilePrefix(taskKey)
        let names = state.withLock { state -> [String] in
            loadIfNeeded(&state)
            let names = state.entries.keys.filter { $0.hasPrefix(prefix) }
            for name in names { state.totalSize -= state.entries.removeValue(forKey: name)?.size ?? 0 }
            return names
        }
        for name in names { try? FileManager.default.removeItem(atPath: path(name)) }
    }

    /// Deletes every cache file.
    public func removeAll() {
        let names = state.withLock { state -> [String] in
            loadIfNeeded(&state)
            let names = Array(state.entries.keys)
            state.entries = [:]
            state.totalSize = 0
            return names
        }
        for name in names { try? FileManager.default.removeItem(atPath: path(name)) }
    }

    /// The total size of the cache files, in bytes.
    public var totalSize: Int {
        state.withLock {
            loadIfNeeded(&$0); return $0.totalSize
        }
    }

    /// How many thumbnails are stored.
    public var count: Int {
        state.withLock {
            loadIfNeeded(&$0); return $0.entries.count
        }
    }

    private func path(_ name: String) -> String {
        PathText.join(config.directory, name)
    }

    private func forget(_ name: String) {
        state.withLock { state in
            state.totalSize -= state.entries.removeValue(forKey: name)?.size ?? 0
        }
    }

    private func loadIfNeeded(_ state: inout State) {
        guard !state.loaded else { return }
        state.loaded = true
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: config.directory) else { return }
        for name in names where name.hasSuffix(".thumb") {
            var status = stat()
            guard stat(path(name), &status) == 0 else { continue }
            let size = Int(status.st_size)
            let time = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
            state.entries[name] = Entry(size: size, lastUse: time)
            state.totalSize += size
            state.clock = max(state.clock, time)
        }
    }
}
