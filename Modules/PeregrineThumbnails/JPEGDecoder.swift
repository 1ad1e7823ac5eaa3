internal import CTurboJPEG

/// Decodes JPEG through TurboJPEG, shrinking in the DCT domain (1/2, 1/4 or 1/8 of the size, read
/// directly from the coefficients) when a smaller image is enough, and turning the result upright
/// by its EXIF orientation.
enum JPEGDecoder {
    /// A decoded JPEG and how it was decoded.
    struct Decoded {
        /// Upright pixels at the decoded scale.
        var image: RasterImage
        /// The DCT scale the image was decoded at: 1, 2, 4 or 8 (meaning 1/1 … 1/8).
        var scaleDenominator: Int
        /// The size the file declares, before scaling and orientation.
        var sourceWidth: Int
        var sourceHeight: Int
        var orientation: ImageOrientation
    }

    /// The DCT scales used, largest first. TurboJPEG also offers odd eighths, but 1/2, 1/4 and 1/8
    /// are the ones its SIMD code paths make fast.
    static let denominators = [1, 2, 4, 8]

    /// Decodes `bytes`. With a `targetHeight`, picks the smallest DCT scale whose upright height is
    /// still at least `targetHeight`.
    ///
    /// - Throws: ``ThumbnailError`` — ``ThumbnailError/Code/corruptImage`` when TurboJPEG cannot read
    ///   the header, fails fatally or the data ends before the image does (truncated; TurboJPEG
    ///   would pad it with grey), ``ThumbnailError/Code/imageTooLarge`` before any allocation when a limit
    ///   would be exceeded.
    static func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, targetHeight: Int?, limits: ImageDecodingLimits
    ) throws -> Decoded {
        guard let base = bytes.baseAddress, bytes.count > 3 else {
            throw ThumbnailError(.corruptImage, "the JPEG data is empty")
        }
        let structure = JPEGStructure(bytes)
        guard let handle = tjInitDecompress() else {
            throw ThumbnailError(.corruptImage, "TurboJPEG could not start a decompressor")
        }
        defer { tjDestroy(handle) }

        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        guard
            tjDecompressHeader3(handle, base, UInt(bytes.count), &width, &height, &subsampling, &colorspace) == 0
        else {
            throw ThumbnailError(.corruptImage, "unreadable JPEG header: \(message(handle))")
        }
        guard width > 0, height > 0 else { throw ThumbnailError(.corruptImage, "the JPEG header gives an empty image") }
        let sourcePixels = Int(width) * Int(height)
        guard sourcePixels <= limits.maximumSourcePixels else {
            throw ThumbnailError(
                .imageTooLarge,
                "the JPEG is \(width) × \(height), above the limit of \(limits.maximumSourcePixels) pixels")
        }
        if structure.isProgressive, sourcePixels > limits.maximumProgressiveSourcePixels {
            throw ThumbnailError(
                .imageTooLarge,
                "the progressive JPEG is \(width) × \(height), above the limit of "
                    + "\(limits.maximumProgressiveSourcePixels) pixels")
        }

        let orientation = structure.orientation
        var denominator = 1
        if let targetHeight, targetHeight > 0 {
            let uprightHeight = Int(orientation.swapsDimensions ? width : height)
            for candidate in denominators where scaled(uprightHeight, candidate) >= targetHeight {
                denominator = candidate
            }
        }
        let scaledWidth = scaled(Int(width), denominator)
        let scaledHeight = scaled(Int(height), denominator)
        guard scaledWidth * scaledHeight <= limits.maximumDecodedPixels else {
            throw ThumbnailError(
                .imageTooLarge,
                "decoding the JPEG needs \(scaledWidth) × \(scaledHeight) pixels, above the limit of "
                    + "\(limits.maximumDecodedPixels)")
        }

        let isCMYK = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        let isGray = colorspace == Int32(TJCS_GRAY.rawValue)
        let pixelFormat: TJPF = isCMYK ? TJPF_CMYK : isGray ? TJPF_GRAY : TJPF_RGB
        let channels = isCMYK ? 4 : isGray ? 1 : 3
        var pixels = [UInt8](repeating: 0, count: scaledWidth * scaledHeight * channels)
        let result = pixels.withUnsafeMutableBufferPointer { target in
            tjDecompress2(
                handle, base, UInt(bytes.count), target.baseAddress, Int32(scaledWidth), 0, Int32(scaledHeight),
                Int32(pixelFormat.rawValue), peregrine_tj_decode_flags())
        }
        if result != 0 {
            let text = message(handle)
            guard tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) else {
                throw ThumbnailError(.corruptImage, "the JPEG could not be decoded: \(text)")
            }
            // libjpeg pads a file that ends early with grey and only warns; a thumbnail of half a
            // picture would be cached as if it were the picture, so truncation is an error.
            // Other warnings (extraneous bytes, a bad marker) leave a usable image.
            if text.contains(Self.truncationWarning) {
                throw ThumbnailError(.corruptImage, "the JPEG data ends early (truncated file): \(text)")
            }
        }

        var image: RasterImage
        if isCMYK {
            image = RasterImage(
                unchecked: scaledWidth, height: scaledHeight, pixelFormat: .rgb8, pixels: rgb(fromInvertedCMYK: pixels))
        } else {
            image = RasterImage(
                unchecked: scaledWidth, height: scaledHeight, pixelFormat: isGray ? .gray8 : .rgb8, pixels: pixels)
        }
        image = orientation.apply(to: image)
        return Decoded(
            image: image, scaleDenominator: denominator, sourceWidth: Int(width), sourceHeight: Int(height),
            orientation: orientation)
    }

    /// libjpeg's `JWRN_JPEG_EOF` text, the warning it gives when the data ends before the image.
    static let truncationWarning = "Premature end of JPEG file"

    /// TurboJPEG's `TJSCALED` for a scale of 1/`denominator`.
    static func scaled(_ dimension: Int, _ denominator: Int) -> Int {
        (dimension + denominator - 1) / denominator
    }

    /// CMYK JPEGs (Adobe's) store inverted ink values; with those, each colour is ink × black / 255.
    static func rgb(fromInvertedCMYK cmyk: [UInt8]) -> [UInt8] {
        let count = cmyk.count / 4
        var rgb = [UInt8](repeating: 0, count: count * 3)
        cmyk.withUnsafeBufferPointer { source in
            rgb.withUnsafeMutableBufferPointer { target in
                for pixel in 0..<count {
                    let black = Int(source[pixel * 4 + 3])
                    for channel in 0..<3 {
                        target[pixel * 3 + channel] = UInt8((Int(source[pixel * 4 + channel]) * black + 127) / 255)
                    }
                }
            }
        }
        return rgb
    }

    static func message(_ handle: tjhandle) -> String {
        guard let text = tjGetErrorStr2(handle) else { return "unknown TurboJPEG error" }
        return String(cString: text)
    }
}
