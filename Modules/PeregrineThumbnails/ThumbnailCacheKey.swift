/// Identifies one cached thumbnail: whose it is, which processor made it (with every option that
/// changes the output, such as the encoding) and for which height.
public struct ThumbnailCacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The task the thumbnail belongs to (its URL string in the download manager).
    public var taskKey: String
    /// ``ThumbnailProcessor/identifier`` of the processor that made it.
    public var processorIdentifier: String
    /// The height the thumbnail was made for.
    public var targetHeight: Int

    /// A key for the given parts.
    public init(taskKey: String, processorIdentifier: String, targetHeight: Int) {
        self.taskKey = taskKey
        self.processorIdentifier = processorIdentifier
        self.targetHeight = targetHeight
    }

    /// The same key for another height.
    public func withTargetHeight(_ height: Int) -> ThumbnailCacheKey {
        ThumbnailCacheKey(taskKey: taskKey, processorIdentifier: processorIdentifier, targetHeight: height)
    }

    /// The key as one line of text, stored inside disk cache files to check them.
    public var description: String { "\(processorIdentifier)|\(targetHeight)|\(taskKey)" }

    /// The disk cache file name: stable across runs, and starting with ``taskFilePrefix``.
    var fileName: String {
        Self.taskFilePrefix(taskKey) + StableHash.hex(processorIdentifier).prefix(16) + "-\(targetHeight).thumb"
    }

    /// The start of every disk cache file name of `taskKey`'s thumbnails.
    static func taskFilePrefix(_ taskKey: String) -> String {
        StableHash.hex(taskKey) + "-"
    }
}
