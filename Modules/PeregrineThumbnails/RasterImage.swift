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

/// Decoded pixels: `height` rows of `width` pixels, tightly packed, 8 bits per sample.
public struct RasterImage: Sendable, Hashable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The layout of each pixel.
    public let pixelFormat: ThumbnailPixelFormat
    /// `width × height × pixelFormat.channelCount` samples, row after row.
    public let pixels: [UInt8]

    /// Wraps pixels.
    ///
    /// - Throws: ``ThumbnailError/Code/invalidArgument`` when a side is not positive or the
    ///   number of samples does not match the size.
    public init(width: Int, height: Int, pixelFormat: ThumbnailPixelFormat, pixels: [UInt8]) throws {
        guard width > 0, height > 0, width <= 1 << 20, height <= 1 << 20,
            pixels.count == width * height * pixelFormat.channelCount
        else {
            throw ThumbnailError(
                .invalidArgument,
                "\(pixels.count) samples do not make a \(width) × \(height) \(pixelFormat.rawValue) image")
        }
        self.init(unchecked: width, height: height, pixelFormat: pixelFormat, pixels: pixels)
    }

    init(unchecked width: Int, height: Int, pixelFormat: ThumbnailPixelFormat, pixels: [UInt8]) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.pixels = pixels
    }

    /// Decodes a PNG or a JPEG (judged by its signature; EXIF orientation applied).
    ///
    /// - Throws: ``ThumbnailError`` for unsupported, corrupt or too large images; never crashes
    ///   on bad input.
    public init(decoding data: Data, limits: ImageDecodingLimits = .standard) throws {
        self = try ImageDecoder.decode([UInt8](data), targetHeight: nil, limits: limits)
    }

    /// The image scaled to `height` rows, keeping the aspect ratio (the width is rounded, at
    /// least 1 and at most 16 × `height`), with area averaging when shrinking and bilinear
    /// interpolation when enlarging. Colour is weighted by alpha, so transparent pixels leave no
    /// dark fringes.
    public func resized(toHeight height: Int) -> RasterImage {
        let height = max(1, height)
        let exactWidth = Double(width) * Double(height) / Double(self.height)
        let width = min(max(1, Int(exactWidth.rounded())), 16 * height)
        return resized(toWidth: width, height: height)
    }

    /// The image scaled to exactly `width × height` (both at least 1).
    public func resized(toWidth width: Int, height: Int) -> RasterImage {
        ImageResampler.resample(self, toWidth: max(1, width), height: max(1, height))
    }

    /// The image with its alpha laid over white (itself when it has none).
    public func withoutAlpha() -> RasterImage {
        guard pixelFormat.hasAlpha else { return self }
        let channels = pixelFormat.channelCount
        let colors = channels - 1
        var output = [UInt8](repeating: 0, count: width * height * colors)
        pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                for pixel in 0..<(width * height) {
                    let alpha = Int(source[pixel * channels + colors])
                    for channel in 0..<colors {
                        let value = Int(source[pixel * channels + channel])
                        target[pixel * colors + channel] = UInt8((value * alpha + 255 * (255 - alpha) + 127) / 255)
                    }
                }
            }
        }
        return RasterImage(
            unchecked: width, height: height, pixelFormat: colors == 1 ? .gray8 : .rgb8, pixels: output)
    }

    /// Encodes the image as PNG.
    public func pngData(compressionLevel: Int = 6) throws -> Data {
        try PNGEncoder.encode(self, compressionLevel: compressionLevel)
    }

    /// Encodes the image as baseline JPEG (alpha laid over white).
    public func jpegData(quality: Int = 85) throws -> Data {
        try JPEGEncoder.encode(withoutAlpha(), quality: quality)
    }
}
