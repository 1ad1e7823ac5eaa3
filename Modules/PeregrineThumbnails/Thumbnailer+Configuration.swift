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

extension Thumbnailer {
    /// Everything a ``Thumbnailer`` is built from. Processors are made from ``encoding`` and the
    /// decoding limits at creation; assign ``imageProcessor`` or ``videoProcessor`` afterwards to
    /// plug in others.
    public struct Configuration: Sendable {
        /// The memory cache's limits.
        public var memory: ThumbnailMemoryStorage.Config
        /// The disk cache, or `nil` for none.
        public var disk: ThumbnailDiskStorage.Config?
        /// Where new thumbnails are kept.
        public var cachePolicy: ThumbnailCachePolicy
        /// How thumbnails of images, videos and custom thumbnails are encoded (icons are always PNG).
        public var encoding: ThumbnailEncoding
        /// The bounds on everything decoded.
        public var decodingLimits: ImageDecodingLimits
        /// How many pixels a cached thumbnail's height may be off the requested one and still be
        /// served; one further off is made again. Default: 2.
        public var heightTolerance: Int
        /// Requested heights are clamped to 1 ... this. Default: 1024.
        public var maximumTargetHeight: Int
        /// The file-kind rules.
        public var classifier: FileTypeClassifier
        /// A directory of `<EXT>.png` icons that override or add type icons by extension.
        public var customIconDirectory: String?
        /// Where persisted custom thumbnails are written; without it only memory-only custom
        /// thumbnails can be set.
        public var customThumbnailDirectory: String?
        /// Makes image thumbnails.
        public var imageProcessor: any ThumbnailProcessor
        /// Makes video thumbnails; `nil` (or unavailable, without `ffmpeg`) gives videos their icon.
        public var videoProcessor: (any ThumbnailProcessor)?
        /// How many thumbnails are made at the same time. Default: the number of cores.
        public var maximumConcurrentJobs: Int
        /// Called (on the thread that changed it) whenever the persisted custom thumbnails change,
        /// with the index the store should save.
        public var customThumbnailIndexDidChange: (@Sendable (CustomThumbnailIndex) -> Void)?

        /// A configuration; omitted values take the defaults.
        public init(
            memory: ThumbnailMemoryStorage.Config = .init(),
            disk: ThumbnailDiskStorage.Config? = nil,
            cachePolicy: ThumbnailCachePolicy = .memoryAndDisk,
            encoding: ThumbnailEncoding = .png,
            decodingLimits: ImageDecodingLimits = .standard,
            heightTolerance: Int = 2,
            maximumTargetHeight: Int = 1024,
            classifier: FileTypeClassifier = .standard,
            customIconDirectory: String? = nil,
            customThumbnailDirectory: String? = nil,
            videoFrameExtractor: VideoFrameExtractor = VideoFrameExtractor(),
            maximumConcurrentJobs: Int = ProcessInfo.processInfo.activeProcessorCount,
            customThumbnailIndexDidChange: (@Sendable (CustomThumbnailIndex) -> Void)? = nil
        ) {
            self.memory = memory
            self.disk = disk
            self.cachePolicy = cachePolicy
            self.encoding = encoding
            self.decodingLimits = decodingLimits
            self.heightTolerance = max(0, heightTolerance)
            self.maximumTargetHeight = max(1, maximumTargetHeight)
            self.classifier = classifier
            self.customIconDirectory = customIconDirectory
            self.customThumbnailDirectory = customThumbnailDirectory
            self.imageProcessor = ImageThumbnailProcessor(encoding: encoding, limits: decodingLimits)
            self.videoProcessor = VideoThumbnailProcessor(
                extractor: videoFrameExtractor, encoding: encoding, limits: decodingLimits)
            self.maximumConcurrentJobs = max(1, maximumConcurrentJobs)
            self.customThumbnailIndexDidChange = customThumbnailIndexDidChange
        }
    }
}
