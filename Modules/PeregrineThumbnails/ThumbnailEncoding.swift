/// How thumbnails are encoded for the caches and the handlers.
///
/// PNG keeps alpha and is lossless; JPEG is smaller for photographs and video frames (images with
/// alpha are laid over white first). The encoding is part of every processor's identifier, so
/// changing it never serves thumbnails encoded the other way from the caches.
public enum ThumbnailEncoding: Sendable, Hashable {
    /// PNG at a zlib compression level from 0 (fastest) to 9 (smallest); 6 is zlib's default.
    case png(compressionLevel: Int)
    /// Baseline JPEG at a quality from 1 to 100, 4:2:0 chroma subsampling.
    case jpeg(quality: Int)

    /// PNG at zlib's default compression level.
    public static let png = ThumbnailEncoding.png(compressionLevel: 6)

    /// The encoded format.
    public var format: ImageFormat {
        switch self {
        case .png: .png
        case .jpeg: .jpeg
        }
    }

    /// A short stable text for cache keys, such as `png6` or `jpeg85`.
    public var identifier: String {
        switch self {
        case .png(let level): "png\(min(max(level, 0), 9))"
        case .jpeg(let quality): "jpeg\(min(max(quality, 1), 100))"
        }
    }

    /// Encodes `image` this way.
    ///
    /// - Throws: ``ThumbnailError`` with code ``ThumbnailError/Code/encodingFailed`` when the
    ///   library refuses the image.
    public func encode(_ image: RasterImage) throws -> Thumbnail {
        switch self {
        case .png(let level):
            let data = try PNGEncoder.encode(image, compressionLevel: level)
            return Thumbnail(
                uncheckedWidth: image.width, height: image.height, pixelFormat: image.pixelFormat, format: .png,
                data: data)
        case .jpeg(let quality):
            let flattened = image.withoutAlpha()
            let data = try JPEGEncoder.encode(flattened, quality: quality)
            return Thumbnail(
                uncheckedWidth: flattened.width, height: flattened.height, pixelFormat: flattened.pixelFormat,
                format: .jpeg, data: data)
        }
    }
}
