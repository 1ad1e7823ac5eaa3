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

/// A thumbnail or type icon: an encoded image (PNG, or JPEG when the cache is set to it) with its
/// size and pixel format. A plain value with no UI toolkit behind it; decode it with
/// ``decoded(limits:)`` or hand ``data`` to whatever draws images.
public struct Thumbnail: Sendable, Hashable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The layout of the pixels once decoded.
    public let pixelFormat: ThumbnailPixelFormat
    /// How ``data`` is encoded.
    public let format: ImageFormat
    /// The encoded image.
    public let data: Data

    /// Wraps encoded data whose properties the caller already knows (the encoders, the caches).
    init(uncheckedWidth width: Int, height: Int, pixelFormat: ThumbnailPixelFormat, format: ImageFormat, data: Data) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.format = format
        self.data = data
    }

    /// Reads an encoded PNG or JPEG, decoding it once to check it and learn its size.
    ///
    /// - Throws: ``ThumbnailError`` (``ThumbnailError/Code/unsupportedFormat``,
    ///   ``ThumbnailError/Code/corruptImage``, ``ThumbnailError/Code/imageTooLarge``).
    public init(data: Data, limits: ImageDecodingLimits = .standard) throws {
        let bytes = [UInt8](data)
        let decoded = try ImageDecoder.decode(bytes, targetHeight: nil, limits: limits)
        guard let format = ImageFormat(sniffing: bytes) else {
            throw ThumbnailError(.unsupportedFormat, "the data is neither a PNG nor a JPEG")
        }
        self.init(
            uncheckedWidth: decoded.width, height: decoded.height, pixelFormat: decoded.pixelFormat, format: format,
            data: data)
    }

    /// Encodes `image`; see ``ThumbnailEncoding/encode(_:)``.
    public init(image: RasterImage, encoding: ThumbnailEncoding = .png) throws {
        self = try encoding.encode(image)
    }

    /// Decodes the pixels (EXIF orientation applied for JPEG).
    public func decoded(limits: ImageDecodingLimits = .standard) throws -> RasterImage {
        try ImageDecoder.decode([UInt8](data), targetHeight: nil, limits: limits)
    }

    /// This thumbnail at `height` pixels high, aspect ratio kept, re-encoded with `encoding`;
    /// itself when it already has that height and encoding's format.
    public func scaled(toHeight height: Int, encoding: ThumbnailEncoding = .png) throws -> Thumbnail {
        if height == self.height, format == encoding.format { return self }
        return try encoding.encode(decoded().resized(toHeight: height))
    }

    /// What the thumbnail costs in a memory cache: its encoded bytes plus a fixed overhead.
    public var cost: Int { data.count + 96 }
}
