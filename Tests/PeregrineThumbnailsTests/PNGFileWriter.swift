import Foundation

/// Writes PNG files byte by byte (stored deflate blocks, no compression), so tests can make the
/// variants Peregrine's encoder never writes: palettes with transparency, 16-bit samples, Adam7
/// interlacing, and hostile headers.
struct PNGFileWriter {
    var width: Int
    var height: Int
    var bitDepth: UInt8 = 8
    /// 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA.
    var colorType: UInt8
    var interlaced = false
    var palette: [UInt8] = []
    var transparency: [UInt8] = []

    var samplesPerPixel: Int {
        switch colorType {
        case 0, 3: 1
        case 2: 3
        case 4: 2
        default: 4
        }
    }

    var bytesPerPixel: Int { samplesPerPixel * Int(bitDepth) / 8 }

    /// `pixels`: rows of samples (big-endian for 16 bits), `bytesPerPixel` per pixel.
    func encode(_ pixels: [UInt8]) -> Data {
        var raw: [UInt8] = []
        if interlaced {
            let passes = [
                (0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2),
            ]
            for (startX, startY, stepX, stepY) in passes {
                guard startX < width, startY < height else { continue }
                for y in stride(from: startY, to: height, by: stepY) {
                    raw.append(0)
                    for x in stride(from: startX, to: width, by: stepX) {
                        let start = (y * width + x) * bytesPerPixel
                        raw += pixels[start..<start + bytesPerPixel]
                    }
                }
            }
        } else {
            for y in 0..<height {
                raw.append(0)
                raw += pixels[(y * width * bytesPerPixel)..<((y + 1) * width * bytesPerPixel)]
            }
        }
        var header: [UInt8] = []
        header += Self.be32(UInt32(width)) + Self.be32(UInt32(height))
        header += [bitDepth, colorType, 0, 0, interlaced ? 1 : 0]
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += Self.chunk("IHDR", header)
        if !palette.isEmpty { file += Self.chunk("PLTE", palette) }
        if !transparency.isEmpty { file += Self.chunk("tRNS", transparency) }
        file += Self.chunk("IDAT", Self.zlibStored(raw))
        file += Self.chunk("IEND", [])
        return Data(file)
    }

    static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(crc32(body))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let final: UInt8 = offset + count >= data.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<offset + count]
            offset += count
        } while offset < data.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + be32(b << 16 | a)
    }

    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    /// `png` with its IHDR width and height replaced (and the CRC fixed), as a lying header.
    static func withHeaderSize(_ png: Data, width: UInt32, height: UInt32) -> Data {
        var bytes = [UInt8](png)
        bytes.replaceSubrange(16..<20, with: be32(width))
        bytes.replaceSubrange(20..<24, with: be32(height))
        bytes.replaceSubrange(29..<33, with: be32(crc32(Array(bytes[12..<29]))))
        return Data(bytes)
    }
}
