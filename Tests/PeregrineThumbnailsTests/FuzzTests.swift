import Foundation
import TestSupport
import Testing

@testable import PeregrineThumbnails

/// Seeded mutations of valid files fed to the decoders for a bounded time: every outcome must be
/// an image within the limits or a ``ThumbnailError`` — never a crash, a hang or a huge allocation.
@Suite struct FuzzTests {
    static let limits = ImageDecodingLimits(
        maximumFileBytes: 1 << 20, maximumSourcePixels: 4_000_000, maximumProgressiveSourcePixels: 1_000_000,
        maximumDecodedPixels: 1_000_000)

    static func seeds() throws -> [[UInt8]] {
        let photo = TestImages.photo(width: 96, height: 64, seed: 7)
        var alpha: [UInt8] = []
        for index in 0..<(40 * 30) { alpha += [UInt8(index % 256), 90, 200, UInt8((index * 3) % 256)] }
        let rgba = try RasterImage(width: 40, height: 30, pixelFormat: .rgba8, pixels: alpha)
        var palette = PNGFileWriter(width: 16, height: 16, colorType: 3)
        palette.palette = [255, 0, 0, 0, 255, 0, 0, 0, 255]
        palette.transparency = [255, 128]
        var interlaced = PNGFileWriter(width: 17, height: 9, colorType: 2)
        interlaced.interlaced = true
        return [
            [UInt8](try photo.jpegData(quality: 85)),
            [UInt8](try JPEGEncoder.encode(photo, quality: 70, progressive: true)),
            [UInt8](TestImages.withExifOrientation(try photo.jpegData(quality: 60), 6)),
            [UInt8](try photo.pngData()),
            [UInt8](try rgba.pngData()),
            [UInt8](palette.encode((0..<256).map { UInt8($0 % 3) })),
            [UInt8](interlaced.encode((0..<(17 * 9 * 3)).map { UInt8($0 % 251) })),
        ]
    }

    static func mutate(_ input: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var bytes = input
        let edits = 1 + Int(random.next() % 8)
        for _ in 0..<edits {
            guard !bytes.isEmpty else { break }
            let position = Int(random.next() % UInt64(bytes.count))
            switch random.next() % 8 {
            case 0: bytes[position] ^= UInt8(1 << (random.next() % 8))
            case 1: bytes[position] = UInt8(truncatingIfNeeded: random.next())
            case 2: bytes[position] = [0x00, 0xFF, 0x7F, 0x80][Int(random.next() % 4)]
            case 3: bytes.removeSubrange(position...)  // truncate
            case 4:  // duplicate a slice (repeated markers, chunks)
                let length = min(Int(random.next() % 64), bytes.count - position)
                bytes.insert(contentsOf: bytes[position..<(position + length)], at: position)
            case 5:  // delete a slice
                let length = min(Int(random.next() % 32), bytes.count - position)
                bytes.removeSubrange(position..<(position + length))
            case 6:  // insert random bytes
                let extra = (0..<Int(random.next() % 16)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                bytes.insert(contentsOf: extra, at: position)
            default:  // damage the header, where sizes live
                let headerPosition = Int(random.next() % UInt64(min(bytes.count, 40)))
                bytes[headerPosition] = UInt8(truncatingIfNeeded: random.next())
            }
        }
        return bytes
    }

    /// Recomputes every PNG chunk's CRC, so that mutations reach libpng's decoding instead of
    /// stopping at its checksum test.
    static func fixingChunkCRCs(_ input: [UInt8]) -> [UInt8] {
        var bytes = input
        var offset = 8
        while offset + 12 <= bytes.count {
            let length =
                Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
            guard length >= 0, offset + 12 + length <= bytes.count else { break }
            let crc = PNGFileWriter.crc32(Array(bytes[(offset + 4)..<(offset + 8 + length)]))
            bytes.replaceSubrange((offset + 8 + length)..<(offset + 12 + length), with: PNGFileWriter.be32(crc))
            offset += 12 + length
        }
        return bytes
    }

    @Test func mutatedImagesNeverCrashTheDecoders() throws {
        let seeds = try Self.seeds()
        var random = SeededRandom(seed: 0x5EED_0008)
        let deadline = ContinuousClock.now + .seconds(4)
        var runs = 0
        var decoded = 0
        var failures: [ThumbnailError.Code: Int] = [:]
        while ContinuousClock.now < deadline, runs < 200_000 {
            let seed = seeds[runs % seeds.count]
            var input = Self.mutate(seed, &random)
            if ImageFormat(sniffing: seed) == .png, random.next() % 2 == 0 { input = Self.fixingChunkCRCs(input) }
            let target: Int? = random.next() % 3 == 0 ? nil : 1 + Int(random.next() % 200)
            do {
                let image = try ImageDecoder.decode(input, targetHeight: target, limits: Self.limits)
                #expect(image.width * image.height <= Self.limits.maximumDecodedPixels)
                #expect(image.pixels.count == image.width * image.height * image.pixelFormat.channelCount)
                decoded += 1
            } catch let error as ThumbnailError {
                failures[error.code, default: 0] += 1
            } catch {
                Issue.record("untyped error \(error)")
            }
            runs += 1
        }
        #expect(runs > 100)
        #expect(decoded > 0)
        #expect(!failures.isEmpty)
    }

    @Test func mutatedExifBlocksNeverReadOutOfBounds() throws {
        let jpeg = [UInt8](TestImages.withExifOrientation(try TestImages.photo(width: 8, height: 8).jpegData(), 3))
        var random = SeededRandom(seed: 42)
        for _ in 0..<20_000 {
            var bytes = jpeg
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let position = 2 + Int(random.next() % 60)  // inside the APP1 segment
                bytes[position] = UInt8(truncatingIfNeeded: random.next())
            }
            if random.next() % 4 == 0 { bytes.removeSubrange((2 + Int(random.next() % 60))...) }
            let structure = bytes.withUnsafeBufferPointer { JPEGStructure($0) }
            #expect((1...8).contains(structure.orientation.rawValue))
        }
    }

    /// The disk cache's file parser reads files anyone could have damaged: mutated containers are
    /// a miss (`nil`) or a thumbnail of the key asked for, never a crash or an out-of-bounds read.
    @Test func mutatedDiskCacheFilesAreMissesNeverCrashes() throws {
        let key = ThumbnailCacheKey(taskKey: "https://h/p.jpg", processorIdentifier: "p", targetHeight: 64)
        let thumbnail = try ImageThumbnailProcessor().makeThumbnail(
            fromImageData: [UInt8](try TestImages.photo(width: 96, height: 64).pngData()), targetHeight: 64)
        let signature = SourceSignature(size: 1234, modificationTime: 5678)
        let valid = [UInt8](ThumbnailFileContainer.encode(thumbnail, key: key, signature: signature))
        #expect(ThumbnailFileContainer.decode(Data(valid), key: key, signature: signature) == thumbnail)
        var random = SeededRandom(seed: 0xD15C)
        var misses = 0
        for _ in 0..<20_000 {
            var bytes = valid
            for _ in 0..<(1 + Int(random.next() % 4)) {
                // Mostly the header (sizes, key length, key), sometimes anywhere.
                let span = random.next() % 4 == 0 ? bytes.count : min(bytes.count, 80)
                guard span > 0 else { break }
                let position = Int(random.next() % UInt64(span))
                switch random.next() % 3 {
                case 0: bytes[position] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.removeSubrange(position...)
                default: bytes[position] = [0x00, 0xFF, 0x7F, 0x80][Int(random.next() % 4)]
                }
            }
            if let found = ThumbnailFileContainer.decode(Data(bytes), key: key, signature: nil) {
                #expect(found.width > 0 && found.height > 0)
                #expect(ImageFormat(sniffing: found.data) == found.format)
            } else {
                misses += 1
            }
        }
        #expect(misses > 0)
    }

    /// The public entry point for pictures a user hands in (custom thumbnails): mutated PNGs and
    /// JPEGs give a ``Thumbnail`` within the limits or a ``ThumbnailError``.
    @Test func mutatedDataNeverCrashesThumbnailInit() throws {
        let seeds = try Self.seeds()
        var random = SeededRandom(seed: 0x7E57)
        for run in 0..<1500 {
            let input = Self.mutate(seeds[run % seeds.count], &random)
            do {
                let thumbnail = try Thumbnail(data: Data(input), limits: Self.limits)
                #expect(thumbnail.width * thumbnail.height <= Self.limits.maximumDecodedPixels)
            } catch is ThumbnailError {
                continue
            } catch {
                Issue.record("untyped error \(error)")
            }
        }
    }
}
