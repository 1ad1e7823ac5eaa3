/// Where newly made thumbnails are kept.
public enum ThumbnailCachePolicy: String, Sendable, Hashable, Codable {
    /// In memory and, when a disk storage is configured, on disk (surviving restarts).
    case memoryAndDisk
    /// In memory only.
    case memoryOnly
    /// Nowhere: every request makes the thumbnail again (for tests and benchmarks).
    case none

    /// The stricter of two policies.
    func restricted(to other: ThumbnailCachePolicy) -> ThumbnailCachePolicy {
        switch (self, other) {
        case (.none, _), (_, .none): .none
        case (.memoryOnly, _), (_, .memoryOnly): .memoryOnly
        default: .memoryAndDisk
        }
    }
}
