/// What Peregrine reads from a JPEG's markers before decoding it: the frame header (size,
/// progressive or not) and the EXIF orientation.
///
/// Parsing is bounded: it stops at the first scan, after 4096 segments or at the end of the data,
/// and every offset inside the EXIF block is checked, so a hostile file cannot make it read out of
/// bounds or loop.
struct JPEGStructure: Sendable, Hashable {
    var width = 0
    var height = 0
    var isProgressive = false
    var hasFrame = false
    var orientation = ImageOrientation.up

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return }
        var offset = 2
        var segments = 0
        var sawExif = false
        while offset + 4 <= bytes.count, segments < 4096 {
            segments += 1
            guard bytes[offset] == 0xFF else { return }
            let marker = bytes[offset + 1]
            if marker == 0xFF {
                offset += 1  // fill byte
                continue
            }
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                offset += 2
                continue
            }
            if marker == 0xDA || marker == 0xD9 { return }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2 else { return }
            let start = offset + 4
            let end = min(offset + 2 + length, bytes.count)
            if start <= end {
                let segment = UnsafeBufferPointer(rebasing: bytes[start..<end])
                if marker == 0xE1, !sawExif, let orientation = Self.exifOrientation(segment) {
                    sawExif = true
                    self.orientation = orientation
                } else if Self.isFrameMarker(marker), !hasFrame, segment.count >= 5 {
                    hasFrame = true
                    isProgressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE
                    height = Int(segment[1]) << 8 | Int(segment[2])
                    width = Int(segment[3]) << 8 | Int(segment[4])
                }
            }
            offset += 2 + length
        }
    }

    /// SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    static func isFrameMarker(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    /// The orientation tag of IFD0 in an APP1 `Exif\0\0` segment, or `nil` when absent or invalid.
    static func exifOrientation(_ segment: UnsafeBufferPointer<UInt8>) -> ImageOrientation? {
        let signature: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
        guard segment.count >= 14, Array(segment[0..<6]) == signature else { return nil }
        let tiff = UnsafeBufferPointer(rebasing: segment[6...])
        let littleEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func read16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            let a = Int(tiff[at])
            let b = Int(tiff[at + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        func read32(_ at: Int) -> Int? {
            guard let low = read16(littleEndian ? at : at + 2), let high = read16(littleEndian ? at + 2 : at) else {
                return nil
            }
            return high << 16 | low
        }
        guard read16(2) == 42, let ifd = read32(4), ifd >= 8, let count = read16(ifd) else { return nil }
        for entry in 0..<min(count, 512) {
            let at = ifd + 2 + entry * 12
            guard let tag = read16(at) else { return nil }
            guard tag == 0x0112 else { continue }
            guard read16(at + 2) == 3, let value = read16(at + 8) else { return nil }
            return ImageOrientation(rawValue: value)
        }
        return nil
    }
}
