#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A JSON value as JSON-RPC carries it: what a request's `params` and `id` hold, and what a
/// response's `result` is built from.
///
/// Numbers keep their integer form when they have one, so that an `id` of `7` comes back as `7`.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is one (a double with an integral value counts).
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9e15: return Int64(value)
        default: return nil
        }
    }

    /// The array, if this is one.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, if this is one.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }
}

extension JSONValue: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(JSONObject(try container.decode([String: JSONValue].self)))
        }
    }
}

extension JSONValue {
    /// Parses one JSON text (see `JSONParser`: no `Data`, no `Decodable` on this path).
    ///
    /// - Throws: an error for anything that is not JSON (the caller answers "Parse error").
    public static func parse(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        let parsed = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParser.Failure) in try JSONParser.parse(buffer) }
        }
        if let parsed { return try parsed.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer throws(JSONParser.Failure) in
            try JSONParser.parse(buffer)
        }
    }

    /// The compact JSON text of this value; an object's members in their order.
    public var serialized: String {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the JSON text of this value, as UTF-8, to `output` (bytes, not `String` appends:
    /// a `tellWaiting` page is a few hundred strings).
    func write(to output: inout some JSONOutput) {
        switch self {
        case .null: output.append("null")
        case .bool(let value): output.append(value ? "true" : "false")
        case .integer(let value): output.append(ascii: String(value))
        case .double(let value): output.append(ascii: value.isFinite ? "\(value)" : "null")
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                value.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            var first = true
            object.forEachMember { key, value in
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                Self.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ string: String, to output: inout some JSONOutput) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return }
            // Runs of bytes that need no escape are copied whole, found eight bytes at a time;
            // UTF-8 (≥ 0x80) passes through.
            let count = utf8.count
            var start = 0
            var index = 0
            while index < count {
                if count - index >= 8,
                    !hasByteToEscape(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                {
                    index += 8
                    continue
                }
                let byte = base[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                    index += 1
                    continue
                }
                output.append(UnsafeRawBufferPointer(start: base + start, count: index - start))
                index += 1
                start = index
                switch byte {
                case UInt8(ascii: "\""): output.append("\\\"")
                case UInt8(ascii: "\\"): output.append("\\\\")
                case 0x0A: output.append("\\n")
                case 0x0D: output.append("\\r")
                case 0x09: output.append("\\t")
                default:
                    output.append("\\u00")
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 0xF)])
                }
            }
            output.append(UnsafeRawBufferPointer(start: base + start, count: count - start))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Whether one of the eight bytes of `word` needs an escape: a control character (below
    /// 0x20), a quote or a backslash. (SWAR: `(x - 0x01…) & ~x & 0x80…` is nonzero exactly when
    /// a byte of `x` is below the subtrahend's byte, here 0x20, or 1 for the bytes equal to a
    /// quote or a backslash, which `^` made zero.)
    private static func hasByteToEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        return (control | ((quotes &- ones) & ~quotes & highs) | ((backslashes &- ones) & ~backslashes & highs)) != 0
    }
}

/// Where `JSONValue` writes its text. (An array of bytes; a `ByteBuffer` costs more than twice
/// as many instructions for writes this small, each checking capacity and exclusive access.)
protocol JSONOutput {
    mutating func append(_ byte: UInt8)
    mutating func append(_ bytes: UnsafeRawBufferPointer)
}

extension JSONOutput {
    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A short text (a number's digits).
    mutating func append(ascii text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }
}

extension [UInt8]: JSONOutput {
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        // As typed bytes, which the array copies whole (a raw buffer goes byte by byte).
        bytes.withMemoryRebound(to: UInt8.self) { append(contentsOf: $0) }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(literal: elements))
    }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
