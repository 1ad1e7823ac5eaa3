/// Thumbnails of video files: a frame at 10 % of the duration through ``VideoFrameExtractor``
/// (the `ffmpeg` program), in the configured encoding. Unavailable without `ffmpeg`, in which
/// case videos get their type icon.
public struct VideoThumbnailProcessor: ThumbnailProcessor {
    /// The frame grabber.
    public var extractor: VideoFrameExtractor
    /// How thumbnails are encoded.
    public var encoding: ThumbnailEncoding
    /// The bounds on the decoded frame.
    public var limits: ImageDecodingLimits

    /// A processor with the given parts.
    public init(
        extractor: VideoFrameExtractor = VideoFrameExtractor(), encoding: ThumbnailEncoding = .png,
        limits: ImageDecodingLimits = .standard
    ) {
        self.extractor = extractor
        self.encoding = encoding
        self.limits = limits
    }

    public var identifier: String {
        "peregrine.video.v1.\(Int((extractor.position * 1000).rounded())).\(encoding.identifier)"
    }

    public var isAvailable: Bool { extractor.isAvailable }

    public func makeThumbnail(for source: ThumbnailSource, targetHeight: Int) throws -> Thumbnail {
        guard let path = source.filePath else {
            throw ThumbnailError(.noThumbnail, "the task \(source.taskKey) has no file yet")
        }
        let height = max(1, targetHeight)
        let frame = try extractor.frame(ofVideoAt: path, height: height, limits: limits)
        return try encoding.encode(frame.resized(toHeight: height))
    }
}
