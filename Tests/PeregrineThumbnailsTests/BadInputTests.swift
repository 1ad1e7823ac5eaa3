import Foundation
import Testing

@testable import PeregrineThumbnails

@Suite struct BadInputTests {
    func code(_ body: () throws -> Void) -> ThumbnailError.Code? {
        do {
            try body()
            return nil
        } catch let error as ThumbnailError {
            return error.code
        } catch {
            Issue.record("unexpected error type: \(error)")
            return nil
        }
    }

    @Test func truncatedJpegFailsTyped() throws {
        let photo = TestImages.photo(width: 640, height: 480)
        let baseline = [UInt8](try photo.jpegData())
        let progressive = [UInt8](try JPEGEncoder.encode(photo, quality: 85, progressive: true))
        for jpeg in [baseline, progressive] {
            // The whole file decodes; every prefix of it is refused with a typed error, never padded
            // with grey into a thumbnail of half a picture.
            #expect(try ImageDecoder.decode(jpeg, targetHeight: 60, limits: .standard).height == 60)
            for length in [2, 3, 10, 100, 300, jpeg.count / 3, jpeg.count / 2, jpeg.count - 2] {
                let result = code {
                    _ = try ImageDecoder.decode(Array(jpeg.prefix(length)), targetHeight: 60, limits: .standard)
                }
                #expect(
                    result == .corruptImage || result == .unsupportedFormat, "\(length): \(String(describing: result))")
            }
        }
    }

    @Test func truncatedJpegFileKeepsItsIcon() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        let jpeg = try TestImages.photo(width: 400, height: 300).jpegData()
        TestImages.write(jpeg.prefix(jpeg.count / 2), to: directory + "/half.jpg")
        let thumbnailer = Thumbnailer()
        let source = ThumbnailSource(taskKey: "half", filePath: directory + "/half.jpg")
        await #expect(throws: ThumbnailError.self) { try await thumbnailer.thumbnail(for: source, targetHeight: 40) }
        let shown = thumbnailer.requestThumbnail(for: source, targetHeight: 40) { _ in
            Issue.record("a truncated JPEG has no thumbnail")
        }
        #expect(shown == thumbnailer.icons.icon(.image, height: 40))
        #expect(thumbnailer.cachedThumbnail(for: source, targetHeight: 40) == nil)
    }

    @Test func truncatedPngFailsTyped() throws {
        let png = [UInt8](try TestImages.photo(width: 200, height: 100).pngData())
        for length in [0, 7, 8, 20, 33, 40, png.count / 2, png.count - 13] {
            let result = code {
                _ = try ImageDecoder.decode(Array(png.prefix(length)), targetHeight: nil, limits: .standard)
            }
            #expect(result == .corruptImage || result == .unsupportedFormat, "\(length): \(String(describing: result))")
        }
    }

    @Test func absurdPngHeaderIsRefusedBeforeAllocating() throws {
        let small = try TestImages.photo(width: 8, height: 8).pngData()
        let lying = PNGFileWriter.withHeaderSize(small, width: 100_000, height: 100_000)
        #expect(code { _ = try RasterImage(decoding: lying) } == .imageTooLarge)
        // Wider than libpng's own user limit, too.
        let wide = PNGFileWriter.withHeaderSize(small, width: 2_000_000, height: 1)
        #expect(code { _ = try RasterImage(decoding: wide) } == .corruptImage)
    }

    @Test func pngDecompressionBombIsRefusedOrShrunkWithinLimits() throws {
        // 6000 × 6000 grey zeros: 36 MB of pixels in a file of a few tens of kilobytes.
        let zeros = try RasterImage(
            width: 6000, height: 6000, pixelFormat: .gray8, pixels: [UInt8](repeating: 0, count: 36_000_000))
        let bomb = [UInt8](try zeros.pngData(compressionLevel: 9))
        #expect(bomb.count < 200_000)
        let tight = ImageDecodingLimits(maximumSourcePixels: 10_000_000, maximumDecodedPixels: 1_000_000)
        #expect(code { _ = try ImageDecoder.decode(bomb, targetHeight: 64, limits: tight) } == .imageTooLarge)
        // Within the source limit, the box shrink keeps memory at the target's size.
        let roomy = ImageDecodingLimits(maximumSourcePixels: 40_000_000, maximumDecodedPixels: 100_000)
        #expect(code { _ = try ImageDecoder.decode(bomb, targetHeight: nil, limits: roomy) } == .imageTooLarge)
        let small = try ImageDecoder.decode(bomb, targetHeight: 100, limits: roomy)
        #expect(small.height == 100 && small.width == 100)
    }

    @Test func hugeJpegHeaderIsRefused() throws {
        var jpeg = [UInt8](try TestImages.photo(width: 16, height: 16).jpegData())
        // Rewrite the SOF0 frame size to 65 000 × 65 000.
        let sof = try #require((0..<(jpeg.count - 1)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange((sof + 5)..<(sof + 9), with: [0xFD, 0xE8, 0xFD, 0xE8])
        #expect(code { _ = try ImageDecoder.decode(jpeg, targetHeight: 128, limits: .standard) } == .imageTooLarge)
        let limits = ImageDecodingLimits(maximumSourcePixels: .max, maximumDecodedPixels: 1_000_000)
        #expect(code { _ = try ImageDecoder.decode(jpeg, targetHeight: 128, limits: limits) } == .imageTooLarge)
    }

    @Test func largeProgressiveJpegHasItsOwnLimit() throws {
        let jpeg = [UInt8](
            try JPEGEncoder.encode(TestImages.photo(width: 400, height: 300), quality: 80, progressive: true))
        let limits = ImageDecodingLimits(maximumProgressiveSourcePixels: 100_000)
        #expect(code { _ = try ImageDecoder.decode(jpeg, targetHeight: 50, limits: limits) } == .imageTooLarge)
        let baseline = [UInt8](try TestImages.photo(width: 400, height: 300).jpegData())
        #expect(try ImageDecoder.decode(baseline, targetHeight: 50, limits: limits).height == 75)
    }

    @Test func fileLyingAboutItsExtensionIsJudgedByItsSignature() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        TestImages.write(try TestImages.quadrants(width: 80, height: 60).pngData(), to: directory + "/png.jpg")
        TestImages.write(Data("<html>not an image</html>".utf8), to: directory + "/page.jpg")
        let thumbnailer = Thumbnailer()
        let real = try await thumbnailer.thumbnail(
            for: ThumbnailSource(taskKey: "a", filePath: directory + "/png.jpg"), targetHeight: 30)
        #expect(real.width == 40 && real.height == 30)
        await #expect(throws: ThumbnailError(.unsupportedFormat, "the data is neither a PNG nor a JPEG")) {
            try await thumbnailer.thumbnail(
                for: ThumbnailSource(taskKey: "b", filePath: directory + "/page.jpg"), targetHeight: 30)
        }
    }

    @Test func unreadableFilesGiveTypedErrorsAndTheIcon() async throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        try FileManager.default.createDirectory(atPath: directory + "/dir.png", withIntermediateDirectories: true)
        let thumbnailer = Thumbnailer()
        for path in [directory + "/missing.png", directory + "/dir.png"] {
            let source = ThumbnailSource(taskKey: path, filePath: path)
            await #expect(throws: ThumbnailError.self) {
                try await thumbnailer.thumbnail(for: source, targetHeight: 40)
            }
            let shown = thumbnailer.requestThumbnail(for: source, targetHeight: 40) { _ in
                Issue.record("no thumbnail can be made from \(path)")
            }
            #expect(shown == thumbnailer.icons.icon(.image, height: 40))
        }
        #expect(code { _ = try SourceFile.read(directory + "/dir.png", maximumBytes: 100) } == .unreadableFile)
    }

    @Test func oversizedFilesAreNotRead() throws {
        let directory = TestImages.temporaryDirectory()
        defer { TestImages.cleanUp(directory) }
        TestImages.write(Data(count: 5000), to: directory + "/big.png")
        #expect(code { _ = try SourceFile.read(directory + "/big.png", maximumBytes: 4999) } == .fileTooLarge)
        #expect(try SourceFile.read(directory + "/big.png", maximumBytes: 5000).count == 5000)
    }

    @Test func corruptCmykAndOddJpegsNeverCrash() throws {
        // A JPEG whose SOF claims 0 × 0.
        var jpeg = [UInt8](try TestImages.photo(width: 16, height: 16).jpegData())
        let sof = try #require((0..<(jpeg.count - 1)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange((sof + 5)..<(sof + 9), with: [0, 0, 0, 0])
        #expect(code { _ = try ImageDecoder.decode(jpeg, targetHeight: 8, limits: .standard) } == .corruptImage)
        // EXIF blocks with offsets pointing anywhere.
        var exif = [UInt8](TestImages.withExifOrientation(try TestImages.photo(width: 16, height: 16).jpegData(), 6))
        exif.replaceSubrange(16..<20, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(try ImageDecoder.decode(exif, targetHeight: nil, limits: .standard).width == 16)
    }
}
