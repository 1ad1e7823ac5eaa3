// Fuzzes JPEG and PNG decoding (libjpeg-turbo and libpng behind PeregrineThumbnails' decoders),
// including JPEG marker parsing (`JPEGStructure`, EXIF orientation) and scaled decoding.
//
// Input: byte 0 picks the target height (0: full size, through the public
// `RasterImage(decoding:limits:)`; else 1…255, through `ImageDecoder`); the rest is the file.
// Checked beyond "no crash": every failure is a `ThumbnailError`, and a decoded image has a
// positive size and exactly `width × height × channels` samples.
//
// The pixel limits are far below the library's defaults so that no input makes the fuzzer
// allocate much (run with -rss_limit_mb=2048).

import Foundation
import FuzzSupport

@testable import PeregrineThumbnails

private let limits = ImageDecodingLimits(
    maximumFileBytes: 1 << 20, maximumSourcePixels: 4_000_000, maximumProgressiveSourcePixels: 1_000_000,
    maximumDecodedPixels: 1_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImageDecoding(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    plantedControlBug(bytes)

    var reader = FuzzReader(bytes)
    let target = Int(reader.byte())
    let file = Array(reader.rest)
    _ = ImageFormat(sniffing: file)
    file.withUnsafeBufferPointer { buffer in
        let structure = JPEGStructure(buffer)
        _ = structure.isProgressive
    }
    do {
        let image: RasterImage
        if target == 0 {
            image = try RasterImage(decoding: Data(file), limits: limits)
        } else {
            image = try ImageDecoder.decodeWithDetails(file, targetHeight: target, limits: limits).image
        }
        fuzzRequire(image.width > 0 && image.height > 0, "decoded an empty image: \(image.width) × \(image.height)")
        fuzzRequire(
            image.pixels.count == image.width * image.height * image.pixelFormat.channelCount,
            "\(image.pixels.count) samples for a \(image.width) × \(image.height) \(image.pixelFormat) image")
        fuzzRequire(
            image.width * image.height <= limits.maximumDecodedPixels,
            "decoded \(image.width) × \(image.height) pixels, above the limit")
    } catch is ThumbnailError {
        // The expected outcome for most inputs.
    } catch {
        fuzzFailure("decoding threw \(type(of: error)), not a ThumbnailError: \(error)")
    }
    return 0
}
