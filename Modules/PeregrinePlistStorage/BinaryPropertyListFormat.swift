import PeregrineJournal
import PeregrineStorage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The binary property-list serializer: each record is a complete `bplist00` document whose
/// values are native property-list types (a date is a date, data is data, an integer an
/// integer, a real a real).
///
/// Written and read by hand rather than through `PropertyListEncoder`: the decoder cannot tell
/// an integer from an integral real, and a million records go several times faster without
/// the `Codable` machinery.
package struct BinaryPropertyListFormat: StoreFormat {
    package init() {}

    package var name: String { "plist" }
    package var framing: RecordFraming { .binary }

    package func encode(_ node: StoreNode, into bytes: inout [UInt8]) {
        var writer = BinaryPropertyListWriter(objectCount: Self.objectCount(node))
        writer.write(node, into: &bytes)
    }

    package func decode(_ bytes: UnsafeRawBufferPointer) throws(StoreFormatError) -> StoreNode {
        let reader = try BinaryPropertyListReader(bytes)
        return try reader.read()
    }

    private static func objectCount(_ node: StoreNode) -> Int {
        switch node {
        case .array(let values): 1 + values.reduce(0) { $0 + objectCount($1) }
        case .dictionary(let pairs): 1 + pairs.reduce(0) { $0 + 1 + objectCount($1.1) }
        default: 1
        }
    }
}

/// Writes one node as a `bplist00` document: objects in post-order, then the offset table and
/// the trailer.
struct BinaryPropertyListWriter {
    private let referenceSize: Int
    private var offsets: [Int] = []
    private var start = 0

    init(objectCount: Int) {
        referenceSize = Self.byteCount(UInt64(max(objectCount - 1, 0)))
        offsets.reserveCapacity(objectCount)
    }

    private static func byteCount(_ value: UInt64) -> Int {
        value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
    }

    mutating func write(_ node: StoreNode, into bytes: inout [UInt8]) {
        start = bytes.count
        bytes.append(contentsOf: "bplist00".utf8)
        let top = writeObject(node, into: &bytes)
        let tableOffset = bytes.count - start
        let offsetSize = Self.byteCount(UInt64(tableOffset))
        for offset in offsets { Self.appendBigEndian(UInt64(offset), size: offsetSize, to: &bytes) }
        bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)])
        Self.appendBigEndian(UInt64(offsets.count), size: 8, to: &bytes)
        Self.appendBigEndian(UInt64(top), size: 8, to: &bytes)
        Self.appendBigEndian(UInt64(tableOffset), size: 8, to: &bytes)
    }

    private static func appendBigEndian(_ value: UInt64, size: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    private mutating func begin(_ bytes: [UInt8]) -> Int {
        offsets.append(bytes.count - start)
        return offsets.count - 1
    }

    private static func appendMarker(_ type: UInt8, count: Int, to bytes: inout [UInt8]) {
        if count < 15 {
            bytes.append(type << 4 | UInt8(count))
        } else {
            bytes.append(type << 4 | 0xF)
            appendInteger(Int64(count), to: &bytes)
        }
    }

    private static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        if value >= 0, value <= 0xFF {
            bytes.append(0x10)
            bytes.append(UInt8(value))
        } else if value >= 0, value <= 0xFFFF {
            bytes.append(0x11)
            appendBigEndian(UInt64(value), size: 2, to: &bytes)
        } else if value >= 0, value <= 0xFFFF_FFFF {
            bytes.append(0x12)
            appendBigEndian(UInt64(value), size: 4, to: &bytes)
        } else {
            bytes.append(0x13)
            appendBigEndian(UInt64(bitPattern: value), size: 8, to: &bytes)
        }
    }

    private mutating func writeObject(_ node: StoreNode, into bytes: inout [UInt8]) -> Int {
        switch node {
        case .array(let values):
            let references = values.map { writeObject($0, into: &bytes) }
            let index = begin(bytes)
            Self.appendMarker(0xA, count: references.count, to: &bytes)
            for reference in references { Self.appendBigEndian(UInt64(reference), size: referenceSize, to: &bytes) }
            return index
        case .dictionary(let pairs):
            var keys: [Int] = []
            keys.reserveCapacity(pairs.count)
            var values: [Int] = []
            values.reserveCapacity(pairs.count)
            for (key, value) in pairs {
                keys.append(writeObject(.string(key), into: &bytes))
                values.append(writeObject(value, into: &bytes))
            }
            let index = begin(bytes)
            Self.appendMarker(0xD, count: pairs.count, to: &bytes)
            for reference in keys { Self.appendBigEndian(UInt64(reference), size: referenceSize, to: &bytes) }
            for reference in values { Self.appendBigEndian(UInt64(reference), size: referenceSize, to: &bytes) }
            return index
        default:
            let index = begin(bytes)
            Self.appendScalar(node, to: &bytes)
            return index
        }
    }

    private static func appendScalar(_ node: StoreNode, to bytes: inout [UInt8]) {
        switch node {
        case .null: bytes.append(0x00)
        case .boolean(let flag): bytes.append(flag ? 0x09 : 0x08)
        case .integer(let number): appendInteger(number, to: &bytes)
        case .real(let number):
            bytes.append(0x23)
            appendBigEndian(number.bitPattern, size: 8, to: &bytes)
        case .date(let date):
            bytes.append(0x33)
            appendBigEndian(date.timeIntervalSinceReferenceDate.bitPattern, size: 8, to: &bytes)
        case .data(let data):
            appendMarker(0x4, count: data.count, to: &bytes)
            bytes.append(contentsOf: data)
        case .string(var text):
            let isASCII = text.withUTF8 { utf8 in utf8.allSatisfy { $0 < 0x80 } }
            if isASCII {
                appendMarker(0x5, count: text.utf8.count, to: &bytes)
                bytes.append(contentsOf: text.utf8)
            } else {
                appendMarker(0x6, count: text.utf16.count, to: &bytes)
                for unit in text.utf16 {
                    bytes.append(UInt8(unit >> 8))
                    bytes.append(UInt8(unit & 0xFF))
                }
            }
        case .array, .dictionary: break
        }
    }
}

/// Reads one `bplist00` document, checking every offset and bounding the nesting (which also
/// stops reference cycles).
struct BinaryPropertyListReader {
    private let bytes: UnsafeRawBufferPointer
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let topObject: Int
    private let tableOffset: Int
    private static let maximumDepth = 200

    init(_ bytes: UnsafeRawBufferPointer) throws(StoreFormatError) {
        self.bytes = bytes
        guard bytes.count >= 8 + 1 + 32, memcmp(bytes.baseAddress!, "bplist00", 8) == 0 else {
            throw StoreFormatError("not a binary property list")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let count = Self.bigEndian(bytes, at: trailer + 8, size: 8)
        let top = Self.bigEndian(bytes, at: trailer + 16, size: 8)
        let table = Self.bigEndian(bytes, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), count > 0, count < UInt64(bytes.count),
            top < count, table >= 9, table < UInt64(trailer),
            UInt64(trailer) - table >= count * UInt64(offsetSize)
        else { throw StoreFormatError("a binary property list has an invalid trailer") }
        objectCount = Int(count)
        topObject = Int(top)
        tableOffset = Int(table)
    }

    private static func bigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    func read() throws(StoreFormatError) -> StoreNode { try object(topObject, depth: 0) }

    private func offset(of object: Int) throws(StoreFormatError) -> Int {
        guard object >= 0, object < objectCount else { throw StoreFormatError("an object reference is out of range") }
        let offset = Int(Self.bigEndian(bytes, at: tableOffset + object * offsetSize, size: offsetSize))
        guard offset >= 8, offset < tableOffset else { throw StoreFormatError("an object offset is out of range") }
        return offset
    }

    private func need(_ offset: Int, _ count: Int) throws(StoreFormatError) {
        guard count >= 0, offset <= tableOffset, count <= tableOffset - offset else {
            throw StoreFormatError("an object runs past the object table")
        }
    }

    /// The count of a marker (its low nibble, or the integer after it) and where its data starts.
    private func count(at offset: Int) throws(StoreFormatError) -> (count: Int, start: Int) {
        let low = Int(bytes[offset] & 0xF)
        guard low == 0xF else { return (low, offset + 1) }
        try need(offset + 1, 1)
        let marker = bytes[offset + 1]
        guard marker >> 4 == 0x1, marker & 0xF <= 3 else { throw StoreFormatError("a count is not an integer") }
        let size = 1 << Int(marker & 0xF)
        try need(offset + 2, size)
        let value = Self.bigEndian(bytes, at: offset + 2, size: size)
        guard value < UInt64(bytes.count) else { throw StoreFormatError("a count is too large") }
        return (Int(value), offset + 2 + size)
    }

    private func object(_ reference: Int, depth: Int) throws(StoreFormatError) -> StoreNode {
        guard depth < Self.maximumDepth else { throw StoreFormatError("a property list is nested too deeply") }
        let offset = try offset(of: reference)
        let marker = bytes[offset]
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: return .null
            case 0x08: return .boolean(false)
            case 0x09: return .boolean(true)
            default: throw StoreFormatError("unknown marker \(marker)")
            }
        case 0x1:
            let size = 1 << Int(marker & 0xF)
            try need(offset + 1, size)
            switch size {
            case 1, 2, 4: return .integer(Int64(Self.bigEndian(bytes, at: offset + 1, size: size)))
            case 8: return .integer(Int64(bitPattern: Self.bigEndian(bytes, at: offset + 1, size: 8)))
            case 16:
                let high = Self.bigEndian(bytes, at: offset + 1, size: 8)
                let low = Self.bigEndian(bytes, at: offset + 9, size: 8)
                guard high == 0, low <= UInt64(Int64.max) else { throw StoreFormatError("an integer is too large") }
                return .integer(Int64(low))
            default: throw StoreFormatError("an integer has an invalid size")
            }
        case 0x2:
            switch marker & 0xF {
            case 2:
                try need(offset + 1, 4)
                return .real(Double(Float(bitPattern: UInt32(Self.bigEndian(bytes, at: offset + 1, size: 4)))))
            case 3:
                try need(offset + 1, 8)
                return .real(Double(bitPattern: Self.bigEndian(bytes, at: offset + 1, size: 8)))
            default: throw StoreFormatError("a real has an invalid size")
            }
        case 0x3:
            guard marker == 0x33 else { throw StoreFormatError("a date has an invalid size") }
            try need(offset + 1, 8)
            let seconds = Double(bitPattern: Self.bigEndian(bytes, at: offset + 1, size: 8))
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case 0x4:
            let (count, start) = try count(at: offset)
            try need(start, count)
            return .data(Data(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])))
        case 0x5:
            let (count, start) = try count(at: offset)
            try need(start, count)
            return .string(
                String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)]), as: UTF8.self))
        case 0x6:
            let (count, start) = try count(at: offset)
            guard count <= Int.max / 2 else { throw StoreFormatError("a string is too long") }
            try need(start, count * 2)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            for index in 0..<count {
                units.append(UInt16(bytes[start + 2 * index]) << 8 | UInt16(bytes[start + 2 * index + 1]))
            }
            return .string(String(decoding: units, as: UTF16.self))
        case 0xA:
            let (count, start) = try count(at: offset)
            guard count <= Int.max / referenceSize else { throw StoreFormatError("an array is too long") }
            try need(start, count * referenceSize)
            var values: [StoreNode] = []
            values.reserveCapacity(count)
            for index in 0..<count {
                let child = Int(Self.bigEndian(bytes, at: start + index * referenceSize, size: referenceSize))
                values.append(try object(child, depth: depth + 1))
            }
            return .array(values)
        case 0xD:
            let (count, start) = try count(at: offset)
            guard count <= Int.max / (2 * referenceSize) else { throw StoreFormatError("a dictionary is too long") }
            try need(start, 2 * count * referenceSize)
            var pairs: [(String, StoreNode)] = []
            pairs.reserveCapacity(count)
            for index in 0..<count {
                let keyReference = Int(Self.bigEndian(bytes, at: start + index * referenceSize, size: referenceSize))
                let valueReference = Int(
                    Self.bigEndian(bytes, at: start + (count + index) * referenceSize, size: referenceSize))
                guard case .string(let key) = try object(keyReference, depth: depth + 1) else {
                    throw StoreFormatError("a dictionary key is not a string")
                }
                pairs.append((key, try object(valueReference, depth: depth + 1)))
            }
            return .dictionary(pairs)
        default:
            throw StoreFormatError("unknown marker \(marker)")
        }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
