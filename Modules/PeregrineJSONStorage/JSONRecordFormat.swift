import PeregrineJournal
import PeregrineStorage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The JSON serializer: one record per line.
///
/// JSON has no dates, no data and no integer/real distinction, so those are written so that
/// they read back exactly: an integer never has a fraction or exponent, a real always has one
/// (`1.0`); a date is `{"$date": <seconds since 2001, shortest round-trip form>}`, data is
/// `{"$data": "<base64>"}`, a non-finite real is `{"$real": "nan"}`; a dictionary that itself
/// has a single key starting with `$` is wrapped as `{"$dict": {…}}`, so no value is mistaken for
/// a tag.
package struct JSONRecordFormat: StoreFormat {
    package init() {}

    package var name: String { "json" }
    package var framing: RecordFraming { .lines }

    package func encode(_ node: StoreNode, into bytes: inout [UInt8]) {
        JSONRecordWriter.write(node, into: &bytes)
    }

    package func decode(_ bytes: UnsafeRawBufferPointer) throws(StoreFormatError) -> StoreNode {
        var parser = JSONRecordParser(bytes)
        return try parser.parseDocument()
    }
}

/// Writes nodes as JSON text, without a newline anywhere.
enum JSONRecordWriter {
    static func write(_ node: StoreNode, into bytes: inout [UInt8]) {
        switch node {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .boolean(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let number): bytes.append(contentsOf: String(number).utf8)
        case .real(let number):
            if number.isFinite {
                bytes.append(contentsOf: number.description.utf8)
            } else {
                let text = number.isNaN ? "nan" : number < 0 ? "-inf" : "inf"
                tagged("$real", .string(text), into: &bytes)
            }
        case .string(let text): writeString(text, into: &bytes)
        case .date(let date): tagged("$date", .real(date.timeIntervalSinceReferenceDate), into: &bytes)
        case .data(let data): tagged("$data", .string(data.base64EncodedString()), into: &bytes)
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(value, into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .dictionary(let pairs):
            if pairs.count == 1, pairs[0].0.hasPrefix("$") {
                bytes.append(contentsOf: #"{"$dict":"#.utf8)
                writeObject(pairs, into: &bytes)
                bytes.append(UInt8(ascii: "}"))
            } else {
                writeObject(pairs, into: &bytes)
            }
        }
    }

    private static func tagged(_ tag: String, _ value: StoreNode, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        writeString(tag, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        write(value, into: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    private static func writeObject(_ pairs: [(String, StoreNode)], into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, pair) in pairs.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            writeString(pair.0, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            write(pair.1, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private static func writeString(_ text: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    bytes.append(contentsOf: "u00".utf8)
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                }
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A strict JSON parser for one record, producing nodes; bounded nesting.
struct JSONRecordParser {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private static let maximumDepth = 200

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func parseDocument() throws(StoreFormatError) -> StoreNode {
        let node = try parseValue(depth: 0)
        skipSpace()
        guard index == bytes.count else { throw error("unexpected text after the record") }
        return node
    }

    private func error(_ message: String) -> StoreFormatError {
        StoreFormatError("JSON: \(message) at byte \(index)")
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int, untagging: Bool = true) throws(StoreFormatError) -> StoreNode {
        guard depth < Self.maximumDepth else { throw error("nested too deeply") }
        skipSpace()
        guard index < bytes.count else { throw error("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth, untagging: untagging)
        case UInt8(ascii: "["):
            index += 1
            var values: [StoreNode] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(values)
            }
            while true {
                values.append(try parseValue(depth: depth + 1))
                skipSpace()
                guard index < bytes.count else { throw error("unterminated array") }
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "]") { return .array(values) }
                guard byte == UInt8(ascii: ",") else { throw error("expected , or ]") }
            }
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try literal("true", .boolean(true))
        case UInt8(ascii: "f"): return try literal("false", .boolean(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return try parseNumber()
        }
    }

    private mutating func literal(_ text: StaticString, _ node: StoreNode) throws(StoreFormatError) -> StoreNode {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count,
            memcmp(bytes.baseAddress! + index, text.utf8Start, count) == 0
        else { throw error("unknown literal") }
        index += count
        return node
    }

    private mutating func parseObject(depth: Int, untagging: Bool) throws(StoreFormatError) -> StoreNode {
        index += 1
        var pairs: [(String, StoreNode)] = []
        // A record (depth 0) has about ten keys: room for them at once, not grown four times.
        pairs.reserveCapacity(depth == 0 ? 16 : 4)
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .dictionary(pairs)
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
            let key = try parseString()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected :") }
            index += 1
            // The dictionary inside a `{"$dict": {…}}` wrapper is taken as it is (its values are
            // read as usual). An object is that wrapper only if `$dict` is its one key, which is
            // known before the value is read by looking ahead for the object's end.
            let wrapped =
                untagging && pairs.isEmpty && key.utf8.first == UInt8(ascii: "$") && key == "$dict"
                && valueEndsObject()
            pairs.append((key, try parseValue(depth: depth + 1, untagging: !wrapped)))
            skipSpace()
            guard index < bytes.count else { throw error("unterminated object") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "}") { break }
            guard byte == UInt8(ascii: ",") else { throw error("expected , or }") }
        }
        if untagging, pairs.count == 1, pairs[0].0.hasPrefix("$") { return try untag(pairs[0].0, pairs[0].1) }
        return .dictionary(pairs)
    }

    /// Whether the value at `index` is the last of its object, looking ahead without reading it
    /// (brackets counted, strings skipped; linear in the value, and taken only after a first key
    /// `$dict`). On malformed text the answer does not matter: reading it reports the error.
    private func valueEndsObject() -> Bool {
        var position = index
        var depth = 0
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\""):
                position += 1
                while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
                    position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "]"):
                if depth == 0 { return false }
                depth -= 1
            case UInt8(ascii: "}"):
                if depth == 0 { return true }
                depth -= 1
            case UInt8(ascii: ","):
                if depth == 0 { return false }
            default: break
            }
            position += 1
        }
        return false
    }

    private func untag(_ tag: String, _ value: StoreNode) throws(StoreFormatError) -> StoreNode {
        switch (tag, value) {
        case ("$date", .real(let seconds)): return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case ("$date", .integer(let seconds)): return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case ("$data", .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw error("bad base64 in $data") }
            return .data(data)
        case ("$real", .string("nan")): return .real(.nan)
        case ("$real", .string("inf")): return .real(.infinity)
        case ("$real", .string("-inf")): return .real(-.infinity)
        case ("$dict", .dictionary(let pairs)): return .dictionary(pairs)
        default: throw error("unknown tag \(tag.prefix(20))")
        }
    }

    private mutating func parseString() throws(StoreFormatError) -> String {
        index += 1
        let start = index
        // Fast path: find the closing quote with memchr; only a string with an escape takes the
        // slow path. (Raw control characters, which the writer never produces, are accepted
        // here: a record is one line, so they cannot hide a record boundary.)
        guard let base = bytes.baseAddress, start <= bytes.count,
            let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), bytes.count - start)
        else { throw error("unterminated string") }
        let end = base.distance(to: UnsafeRawPointer(quote))
        let run = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        if memchr(base + start, Int32(UInt8(ascii: "\\")), end - start) == nil {
            index = end + 1
            return String(decoding: run, as: UTF8.self)
        }
        return try parseEscapedString(from: start)
    }

    private mutating func parseEscapedString(from start: Int) throws(StoreFormatError) -> String {
        var utf8 = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw error("unterminated escape") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800..<0xDC00).contains(scalar), index + 6 <= bytes.count, bytes[index] == 0x5C,
                        bytes[index + 1] == UInt8(ascii: "u")
                    {
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("bad surrogate pair") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let value = Unicode.Scalar(scalar) else { throw error("bad \\u escape") }
                    utf8.append(contentsOf: String(Character(value)).utf8)
                default: throw error("bad escape")
                }
            default:
                if byte < 0x20 { throw error("control character in a string") }
                utf8.append(byte)
            }
        }
        throw error("unterminated string")
    }

    private mutating func parseHex4() throws(StoreFormatError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("bad hex digit")
            }
            value = value << 4 | digit
        }
        return value
    }

    private mutating func parseNumber() throws(StoreFormatError) -> StoreNode {
        let start = index
        var isReal = false
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"): index += 1
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                isReal = true
                index += 1
            default:
                break
            }
            if index < bytes.count, !Self.isNumberByte(bytes[index]) { break }
        }
        guard index > start else { throw error("unexpected character") }
        let digits = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
        if !isReal, let number = Self.integer(digits) { return .integer(number) }
        if let number = Self.shortDecimal(digits) { return .real(number) }
        guard let number = Double(String(decoding: digits, as: UTF8.self)), number.isFinite || isReal else {
            throw error("bad number")
        }
        return .real(number)
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            true
        default: false
        }
    }

    /// Powers of ten a `Double` holds exactly.
    private static let exactPowersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    /// A decimal without an exponent and with at most 15 significant digits (a date's seconds,
    /// as the writer prints them), read without `strtod`: its digits as an integer divided by
    /// a power of ten, both exact in a `Double`, is the correctly rounded value (Clinger's fast
    /// path). Nil for anything else, which `strtod` reads.
    private static func shortDecimal(_ digits: UnsafeRawBufferPointer) -> Double? {
        var position = 0
        let negative = digits.first == UInt8(ascii: "-")
        if negative { position = 1 }
        var mantissa: UInt64 = 0
        var significant = 0
        var fraction = -1
        var sawDigit = false
        while position < digits.count {
            let byte = digits[position]
            position += 1
            if byte == UInt8(ascii: ".") {
                guard fraction < 0, sawDigit else { return nil }
                fraction = 0
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            sawDigit = true
            if mantissa > 0 || byte != UInt8(ascii: "0") { significant += 1 }
            guard significant <= 15 else { return nil }
            mantissa = mantissa * 10 + UInt64(byte - UInt8(ascii: "0"))
            if fraction >= 0 { fraction += 1 }
        }
        guard sawDigit, fraction != 0, fraction <= 22 else { return nil }
        let value = Double(mantissa) / exactPowersOfTen[max(0, fraction)]
        return negative ? -value : value
    }

    private static func integer(_ digits: UnsafeRawBufferPointer) -> Int64? {
        var position = 0
        let negative = digits.first == UInt8(ascii: "-")
        if negative { position = 1 }
        guard position < digits.count else { return nil }
        var magnitude: UInt64 = 0
        while position < digits.count {
            let byte = digits[position]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            magnitude = sum
            position += 1
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
