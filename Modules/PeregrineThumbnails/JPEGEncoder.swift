internal import CTurboJPEG

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

/// Encodes baseline JPEG through TurboJPEG: 4:2:0 for colour, a single channel for grey.
enum JPEGEncoder {
    /// Encodes `image`, which must have no alpha (see ``RasterImage/withoutAlpha()``);
    /// `progressive` writes a progressive JPEG instead of a baseline one.
    static func encode(_ image: RasterImage, quality: Int, progressive: Bool = false) throws -> Data {
        guard !image.pixelFormat.hasAlpha else {
            throw ThumbnailError(.invalidArgument, "JPEG has no alpha channel; flatten the image first")
        }
        guard let handle = tjInitCompress() else {
            throw ThumbnailError(.encodingFailed, "TurboJPEG could not start a compressor")
        }
        defer { tjDestroy(handle) }
        let isGray = image.pixelFormat == .gray8
        let pixelFormat = isGray ? TJPF_GRAY : TJPF_RGB
        let subsampling = isGray ? TJSAMP_GRAY : TJSAMP_420
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let result = image.pixels.withUnsafeBufferPointer { pixels in
            tjCompress2(
                handle, pixels.baseAddress, Int32(image.width), 0, Int32(image.height), Int32(pixelFormat.rawValue),
                &output, &size, Int32(subsampling.rawValue), Int32(min(max(quality, 1), 100)),
                progressive ? TJFLAG_PROGRESSIVE : 0)
        }
        defer { if let output { tjFree(output) } }
        guard result == 0, let output else {
            throw ThumbnailError(.encodingFailed, "TurboJPEG could not encode: \(JPEGDecoder.message(handle))")
        }
        return Data(bytes: output, count: Int(size))
    }
}
