import PeregrineCore
import Synchronization

/// The memory half of the thumbnail cache: least recently used entries go first once either the
/// total cost (encoded bytes) or the count passes its limit.
///
/// Thread-safe; a lookup takes one lock and a hash lookup (well under 10 µs).
public final class ThumbnailMemoryStorage: Sendable {
    /// The limits.
    public struct Config: Sendable, Hashable {
        /// The most bytes of thumbnails kept (see ``Thumbnail/cost``). Default: 32 MiB.
        public var totalCostLimit: Int
        /// The most thumbnails kept. Default: 300, as SDEDownloadManager.
        public var countLimit: Int

        /// Limits with the given values.
        public init(totalCostLimit: Int = 32 << 20, countLimit: Int = 300) {
            self.totalCostLimit = totalCostLimit
            self.countLimit = countLimit
        }
    }

    /// The limits this storage keeps.
    public let config: Config
    private let entries = Locked(LeastRecentlyUsedList<ThumbnailCacheKey, Thumbnail>())

    /// An empty storage.
    public init(config: Config = Config()) {
        self.config = config
    }

    /// The thumbnail for `key`, now the most recently used.
    public func value(forKey key: ThumbnailCacheKey) -> Thumbnail? {
        entries.withLock { $0.value(for: key) }
    }

    /// Whether a thumbnail for `key` is kept, without touching the order.
    public func contains(_ key: ThumbnailCacheKey) -> Bool {
        entries.withLock { $0.peek(key) != nil }
    }

    /// Keeps `thumbnail` for `key`, evicting least recently used entries past the limits. A
    /// thumbnail costlier than the whole limit is not kept.
    public func store(_ thumbnail: Thumbnail, forKey key: ThumbnailCacheKey) {
        let cost = thumbnail.cost
        entries.withLock { list in
            guard cost <= config.totalCostLimit, config.countLimit > 0 else {
                list.remove(key)
                return
            }
            list.set(thumbnail, for: key, cost: cost)
            while list.count > config.countLimit || list.totalCost > config.totalCostLimit {
                list.removeLeastRecentlyUsed()
            }
        }
    }

    /// Forgets the thumbnail for `key`.
    public func removeValue(forKey key: ThumbnailCacheKey) {
        _ = entries.withLock { $0.remove(key) }
    }

    /// Forgets every thumbnail of `taskKey` (O(count)).
    public func removeAll(forTask taskKey: String) {
        entries.withLock { $0.removeAll { $0.taskKey == taskKey } }
    }

    /// Forgets every thumbnail whose key matches (O(count)).
    public func removeAll(where shouldRemove: @Sendable (ThumbnailCacheKey) -> Bool) {
        entries.withLock { $0.removeAll(where: shouldRemove) }
    }

    /// Forgets everything.
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// How many thumbnails are kept.
    public var count: Int { entries.withLock { $0.count } }

    /// The total cost of the kept thumbnails.
    public var totalCost: Int { entries.withLock { $0.totalCost } }
}
