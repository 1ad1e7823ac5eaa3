internal import CPNG

/// Decodes PNG through libpng (all of it inside the C shim, below its own `setjmp`), to 8-bit grey,
/// grey + alpha, RGB or RGBA, box-shrinking row by row while reading when a small image is enough.
enum PNGDecoder {
    /// A decoded PNG and how it was decoded.
    struct Decoded {
        var image: RasterImage
        /// The integer factor the image was box-averaged by while reading (1: full size).
        var shrink: Int
        var sourceWidth: Int
        var sourceHeight: Int
    }

    /// Decodes `bytes`. With a `targetHeight`, averages blocks of the largest integer size that
    /// keeps at least `targetHeight` rows.
    ///
    /// - Throws: ``ThumbnailError`` — ``ThumbnailError/Code/corruptImage`` for any libpng error
    ///   (truncation, bad CRC in a critical chunk, bad zlib data),
    ///   ``ThumbnailError/Code/imageTooLarge`` before any pixel allocation when a limit would be
    ///   exceeded, ``ThumbnailError/Code/unsupportedFormat`` when the signature is not PNG's.
    static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, targetHeight: Int?, limits: ImageDecodingLimits
    ) throws -> Decoded {
        var result = peregrine_png_image()
        let status = peregrine_png_decode(
            bytes.baseAddress, bytes.count, UInt64(max(0, limits.maximumSourcePixels)),
            UInt64(max(0, limits.maximumDecodedPixels)), UInt32(clamping: max(0, targetHeight ?? 0)), &result)
        defer { peregrine_png_free(result.pixels) }
        let message = withUnsafeBytes(of: result.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        switch Int(status) {
        case PEREGRINE_PNG_OK: break
        case PEREGRINE_PNG_NOT_PNG: throw ThumbnailError(.unsupportedFormat, message)
        case PEREGRINE_PNG_TOO_LARGE:
            throw ThumbnailError(
                .imageTooLarge, "\(message) (\(result.source_width) × \(result.source_height) in the header)")
        case PEREGRINE_PNG_OUT_OF_MEMORY: throw ThumbnailError(.imageTooLarge, "out of memory: \(message)")
        default: throw ThumbnailError(.corruptImage, "the PNG could not be decoded: \(message)")
        }
        guard let pixels = result.pixels, let format = ThumbnailPixelFormat(channelCount: Int(result.channels)) else {
            throw ThumbnailError(.corruptImage, "libpng returned no pixels")
        }
        let count = Int(result.width) * Int(result.height) * Int(result.channels)
        let image = RasterImage(
            unchecked: Int(result.width), height: Int(result.height), pixelFormat: format,
            pixels: Array(UnsafeBufferPointer(start: pixels, count: count)))
        return Decoded(
            image: image, shrink: Int(result.shrink), sourceWidth: Int(result.source_width),
            sourceHeight: Int(result.source_height))
    }
}
