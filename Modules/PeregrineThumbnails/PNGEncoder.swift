internal import CPNG

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

/// Encodes PNG through libpng (inside the C shim, below its own `setjmp`).
enum PNGEncoder {
    static func encode(_ image: RasterImage, compressionLevel: Int) throws -> Data {
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size = 0
        var message = [CChar](repeating: 0, count: 160)
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            message.withUnsafeMutableBufferPointer { message in
                peregrine_png_encode(
                    pixels.baseAddress, UInt32(image.width), UInt32(image.height),
                    UInt32(image.pixelFormat.channelCount), Int32(min(max(compressionLevel, 0), 9)), &output, &size,
                    message.baseAddress)
            }
        }
        defer { peregrine_png_free(output) }
        guard Int(status) == PEREGRINE_PNG_OK, let output else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ThumbnailError(.encodingFailed, "libpng could not encode: \(text)")
        }
        return Data(bytes: output, count: size)
    }
}
