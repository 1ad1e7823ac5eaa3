import Foundation
import Testing

@testable import PeregrineThumbnails

@Suite struct ImageThumbnailTests {
    @Test(arguments: [(128, 8), (150, 8), (151, 4), (300, 4), (301, 2), (600, 2), (601, 1), (1200, 1)])
    func jpegDecodesAtTheSmallestDCTScaleAboveTheTarget(target: Int, denominator: Int) throws {
        let jpeg = try TestImages.photo(width: 1600, height: 1200).jpegData(quality: 90)
        let decoded = try [UInt8](jpeg).withUnsafeBufferPointer {
            try JPEGDecoder.decode($0, targetHeight: target, limits: .standard)
        }
        #expect(decoded.scaleDenominator == denominator)
        #expect(decoded.image.width == 1600 / denominator)
        #expect(decoded.image.height == 1200 / denominator)
    }

    @Test func jpegThumbnailHasTheTargetHeightAndAspect() throws {
        let jpeg = try TestImages.photo(width: 1600, height: 1200).jpegData(quality: 90)
        let thumbnail = try ImageThumbnailProcessor().makeThumbnail(fromImageData: [UInt8](jpeg), targetHeight: 128)
        #expect(thumbnail.height == 128)
        #expect(thumbnail.width == 171)
        #expect(thumbnail.format == .png)
        #expect(thumbnail.pixelFormat == .rgb8)
        let image = try thumbnail.decoded()
        #expect(image.width == 171 && image.height == 128)
    }

    @Test func jpegThumbnailKeepsTheColours() throws {
        let jpeg = try TestImages.quadrants(width: 800, height: 600).jpegData(quality: 95)
        let image = try ImageThumbnailProcessor().makeThumbnail(fromImageData: [UInt8](jpeg), targetHeight: 60)
            .decoded()
        #expect(TestImages.close(TestImages.pixel(image, 10, 10), TestImages.red))
        #expect(TestImages.close(TestImages.pixel(image, 70, 10), TestImages.green))
        #expect(TestImages.close(TestImages.pixel(image, 10, 50), TestImages.blue))
        #expect(TestImages.close(TestImages.pixel(image, 70, 50), TestImages.white))
    }

    /// Expected upright top-left and top-right quadrants for each EXIF orientation of the
    /// red/green/blue/white quadrant picture.
    @Test(arguments: [
        (1, TestImages.red, TestImages.green), (2, TestImages.green, TestImages.red),
        (3, TestImages.white, TestImages.blue), (4, TestImages.blue, TestImages.white),
        (5, TestImages.red, TestImages.blue), (6, TestImages.blue, TestImages.red),
        (7, TestImages.white, TestImages.green), (8, TestImages.green, TestImages.white),
    ])
    func exifOrientationIsApplied(orientation: Int, topLeft: [UInt8], topRight: [UInt8]) throws {
        for bigEndian in [false, true] {
            let jpeg = TestImages.withExifOrientation(
                try TestImages.quadrants(width: 320, height: 160).jpegData(quality: 95), orientation,
                bigEndian: bigEndian)
            let image = try RasterImage(decoding: jpeg)
            let swaps = orientation >= 5
            #expect(image.width == (swaps ? 160 : 320))
            #expect(image.height == (swaps ? 320 : 160))
            #expect(TestImages.close(TestImages.pixel(image, 5, 5), topLeft), "orientation \(orientation)")
            #expect(
                TestImages.close(TestImages.pixel(image, image.width - 6, 5), topRight), "orientation \(orientation)")
        }
    }

    @Test func rotatedJpegPicksTheDCTScaleByItsUprightHeight() throws {
        let jpeg = TestImages.withExifOrientation(try TestImages.photo(width: 1600, height: 1200).jpegData(), 6)
        let decoded = try [UInt8](jpeg).withUnsafeBufferPointer {
            try JPEGDecoder.decode($0, targetHeight: 128, limits: .standard)
        }
        #expect(decoded.orientation == .right)
        #expect(decoded.scaleDenominator == 8)
        let thumbnail = try ImageThumbnailProcessor().makeThumbnail(fromImageData: [UInt8](jpeg), targetHeight: 128)
        #expect(thumbnail.width == 96 && thumbnail.height == 128)
    }

    @Test func invalidOrientationValuesAreIgnored() throws {
        for value in [0, 9, 255] {
            let jpeg = TestImages.withExifOrientation(try TestImages.quadrants(width: 64, height: 32).jpegData(), value)
            let image = try RasterImage(decoding: jpeg)
            #expect(image.width == 64 && image.height == 32)
        }
    }

    @Test func grayscaleJpegStaysGray() throws {
        let gray = try RasterImage(
            width: 64, height: 48, pixelFormat: .gray8, pixels: (0..<(64 * 48)).map { UInt8($0 % 256) })
        let thumbnail = try ImageThumbnailProcessor().makeThumbnail(
            fromImageData: [UInt8](try gray.jpegData()), targetHeight: 24)
        #expect(thumbnail.pixelFormat == .gray8)
        #expect(thumbnail.width == 32)
    }

    @Test func progressiveJpegDecodes() throws {
        let jpeg = try JPEGEncoder.encode(TestImages.quadrants(width: 640, height: 480), quality: 90, progressive: true)
        let decoded = try [UInt8](jpeg).withUnsafeBufferPointer { bytes in
            #expect(JPEGStructure(bytes).isProgressive)
            return try JPEGDecoder.decode(bytes, targetHeight: 60, limits: .standard)
        }
        #expect(decoded.scaleDenominator == 8)
        #expect(TestImages.close(TestImages.pixel(decoded.image, 2, 2), TestImages.red))
    }

    @Test func jpegEncodingIsACacheOption() throws {
        let png = try TestImages.photo(width: 300, height: 200).pngData()
        let processor = ImageThumbnailProcessor(encoding: .jpeg(quality: 80))
        let thumbnail = try processor.makeThumbnail(fromImageData: [UInt8](png), targetHeight: 100)
        #expect(thumbnail.format == .jpeg)
        #expect(ImageFormat(sniffing: thumbnail.data) == .jpeg)
        #expect(thumbnail.width == 150 && thumbnail.height == 100)
        #expect(processor.identifier != ImageThumbnailProcessor().identifier)
    }

    @Test func pngThumbnailShrinksWhileReading() throws {
        let png = try TestImages.quadrants(width: 1000, height: 800).pngData()
        let decoded = try ImageDecoder.decodeWithDetails([UInt8](png), targetHeight: 100, limits: .standard)
        #expect(decoded.format == .png)
        #expect(decoded.reduction == 8)
        #expect(decoded.image.height == 100 && decoded.image.width == 125)
        #expect(TestImages.pixel(decoded.image, 3, 3) == TestImages.red)
        let thumbnail = try ImageThumbnailProcessor().makeThumbnail(fromImageData: [UInt8](png), targetHeight: 64)
        #expect(thumbnail.width == 80 && thumbnail.height == 64)
    }

    @Test func pngWithAlphaKeepsAlphaWithoutDarkFringes() throws {
        // Left half transparent black, right half opaque white: the mixed column must stay white.
        var pixels: [UInt8] = []
        for _ in 0..<64 {
            for x in 0..<64 { pixels += x < 32 ? [0, 0, 0, 0] : [255, 255, 255, 255] }
        }
        let image = try RasterImage(width: 64, height: 64, pixelFormat: .rgba8, pixels: pixels)
        let small = try ImageThumbnailProcessor().makeThumbnail(
            fromImageData: [UInt8](try image.pngData()), targetHeight: 5
        ).decoded()
        #expect(small.pixelFormat == .rgba8)
        let edge = TestImages.pixel(small, 2, 2)
        #expect(edge[0] == 255 && edge[1] == 255 && edge[2] == 255)
        #expect(edge[3] > 60 && edge[3] < 200)
    }

    @Test func pngVariantsDecode() throws {
        // Palette with transparency, 1 byte per pixel.
        var palette = PNGFileWriter(width: 8, height: 8, colorType: 3)
        palette.palette = [255, 0, 0, 0, 0, 255]
        palette.transparency = [255, 0]
        let paletted = try RasterImage(decoding: palette.encode((0..<64).map { UInt8($0 % 2) }))
        #expect(paletted.pixelFormat == .rgba8)
        #expect(TestImages.pixel(paletted, 0, 0) == [255, 0, 0, 255])
        #expect(TestImages.pixel(paletted, 1, 0)[3] == 0)

        // 16-bit RGB, scaled to 8 bits.
        let deep = PNGFileWriter(width: 4, height: 4, bitDepth: 16, colorType: 2)
        let deepImage = try RasterImage(
            decoding: deep.encode(
                [UInt8](repeating: 0, count: 0) + (0..<16).flatMap { _ in [0xFF, 0xFF, 0x80, 0x00, 0, 0] }))
        #expect(deepImage.pixelFormat == .rgb8)
        #expect(TestImages.pixel(deepImage, 3, 3) == [255, 128, 0])

        // Grey + alpha.
        let grayAlpha = PNGFileWriter(width: 3, height: 2, colorType: 4)
        let grayAlphaImage = try RasterImage(decoding: grayAlpha.encode([UInt8](repeating: 77, count: 12)))
        #expect(grayAlphaImage.pixelFormat == .grayAlpha8)

        // Adam7 interlaced RGB: same pixels as the non-interlaced encoding.
        let pixels = (0..<(13 * 11 * 3)).map { UInt8(($0 * 7) % 256) }
        var interlaced = PNGFileWriter(width: 13, height: 11, colorType: 2)
        interlaced.interlaced = true
        let plain = PNGFileWriter(width: 13, height: 11, colorType: 2)
        #expect(try RasterImage(decoding: interlaced.encode(pixels)) == RasterImage(decoding: plain.encode(pixels)))
        #expect(try RasterImage(decoding: plain.encode(pixels)).pixels == pixels)
    }

    @Test func interlacedPngShrinks() throws {
        let pixels = [UInt8](repeating: 200, count: 300 * 200 * 3)
        var interlaced = PNGFileWriter(width: 300, height: 200, colorType: 2)
        interlaced.interlaced = true
        let decoded = try ImageDecoder.decodeWithDetails(
            [UInt8](interlaced.encode(pixels)), targetHeight: 50, limits: .standard)
        #expect(decoded.reduction == 4)
        #expect(decoded.image.height == 50 && decoded.image.width == 75)
    }

    @Test func areaAveragingPreservesMeans() throws {
        // A one-pixel checkerboard shrinks to flat mid-grey.
        let checker = try RasterImage(
            width: 64, height: 64, pixelFormat: .gray8,
            pixels: (0..<(64 * 64)).map { ($0 / 64 + $0 % 64) % 2 == 0 ? 0 : 255 })
        let small = checker.resized(toHeight: 8)
        #expect(small.width == 8)
        #expect(small.pixels.allSatisfy { abs(Int($0) - 128) <= 1 })
        // Non-integer factors too.
        let odd = checker.resized(toWidth: 7, height: 5)
        #expect(odd.pixels.allSatisfy { abs(Int($0) - 128) <= 20 })
        // Enlarging interpolates between neighbours.
        let two = try RasterImage(width: 2, height: 1, pixelFormat: .gray8, pixels: [0, 255])
        let wide = two.resized(toWidth: 8, height: 1)
        #expect(wide.pixels.first == 0 && wide.pixels.last == 255)
        #expect(zip(wide.pixels, wide.pixels.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func rasterImageRejectsMismatchedPixels() {
        #expect(throws: ThumbnailError.self) {
            try RasterImage(width: 2, height: 2, pixelFormat: .rgb8, pixels: [1, 2, 3])
        }
        #expect(throws: ThumbnailError.self) {
            try RasterImage(width: 0, height: 2, pixelFormat: .gray8, pixels: [])
        }
    }

    @Test func thumbnailValueReadsItsSizeFromData() throws {
        let data = try TestImages.photo(width: 30, height: 20).pngData()
        let thumbnail = try Thumbnail(data: data)
        #expect(thumbnail.width == 30 && thumbnail.height == 20)
        #expect(thumbnail.pixelFormat == .rgb8 && thumbnail.format == .png)
        #expect(try thumbnail.scaled(toHeight: 10).width == 15)
        #expect(throws: ThumbnailError.self) { try Thumbnail(data: Data("hello".utf8)) }
    }
}
