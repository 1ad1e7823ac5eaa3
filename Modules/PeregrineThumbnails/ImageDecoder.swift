/// Decodes PNG or JPEG by the data's signature (never by a file name).
enum ImageDecoder {
    /// How an image was decoded, for thumbnails and tests.
    struct Decoded {
        /// Upright pixels, at a reduced scale when a target height allowed it.
        var image: RasterImage
        var format: ImageFormat
        /// The reduction applied while decoding: the DCT scale denominator for JPEG, the box
        /// factor for PNG.
        var reduction: Int
    }

    static func decode(_ bytes: [UInt8], targetHeight: Int?, limits: ImageDecodingLimits) throws -> RasterImage {
        try decodeWithDetails(bytes, targetHeight: targetHeight, limits: limits).image
    }

    static func decodeWithDetails(
        _ bytes: [UInt8], targetHeight: Int?, limits: ImageDecodingLimits
    ) throws -> Decoded {
        guard let format = ImageFormat(sniffing: bytes) else {
            throw ThumbnailError(.unsupportedFormat, "the data is neither a PNG nor a JPEG")
        }
        return try bytes.withUnsafeBufferPointer { buffer in
            switch format {
            case .jpeg:
                let decoded = try JPEGDecoder.decode(buffer, targetHeight: targetHeight, limits: limits)
                return Decoded(image: decoded.image, format: .jpeg, reduction: decoded.scaleDenominator)
            case .png:
                let decoded = try PNGDecoder.decode(buffer, targetHeight: targetHeight, limits: limits)
                return Decoded(image: decoded.image, format: .png, reduction: decoded.shrink)
            }
        }
    }
}
