/// CRC-32 (the zlib/PNG polynomial), slicing by eight: the check on every framed record.
import PeregrineCore
import PeregrineStorage

package enum CRC32 {
    private static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var crc = UInt32(index)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            table[index] = crc
        }
        for slice in 1..<8 {
            for index in 0..<256 {
                let previous = table[(slice - 1) * 256 + index]
                table[slice * 256 + index] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        return table
    }()

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        table.withUnsafeBufferPointer { t in
            var crc: UInt32 = 0xFFFF_FFFF
            var index = 0
            let count = bytes.count
            while index + 8 <= count {
                let one = bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian ^ crc
                let two = bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self).littleEndian
                crc =
                    t[7 * 256 + Int(one & 0xFF)] ^ t[6 * 256 + Int((one >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((one >> 16) & 0xFF)] ^ t[4 * 256 + Int(one >> 24)]
                    ^ t[3 * 256 + Int(two & 0xFF)] ^ t[2 * 256 + Int((two >> 8) & 0xFF)]
                    ^ t[256 + Int((two >> 16) & 0xFF)] ^ t[Int(two >> 24)]
                index += 8
            }
            while index < count {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(bytes[index])) & 0xFF)]
                index += 1
            }
            return ~crc
        }
    }

    /// The checksum of `bytes`.
    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
