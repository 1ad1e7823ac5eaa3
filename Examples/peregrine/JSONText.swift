/// JSON as the client commands read and print it: objects as `[String: Any]`, arrays as `[Any]`,
/// numbers as `Int` (or `Double` with a fraction or exponent), `JSONText.null` for null.
/// Written here instead of Foundation's `JSONSerialization`, which would link the whole of
/// Foundation (and ICU) into `peregrine`.
enum JSONText {
    /// JSON's null.
    struct Null: Hashable, Sendable {}
    static let null = Null()

    struct SyntaxError: Error {}

    /// Parses one JSON value (with white space around it).
    static func parse(_ text: String) throws(SyntaxError) -> Any {
        var parser = Parser(bytes: Array(text.utf8))
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw SyntaxError() }
        return value
    }

    /// Serializes `value` on one line: keys sorted, `/` not escaped.
    static func serialize(_ value: Any?) -> String {
        var out = ""
        write(value, to: &out)
        return out
    }

    private static func write(_ value: Any?, to out: inout String) {
        switch value {
        case nil, is Null: out += "null"
        case let text as String: writeString(text, to: &out)
        case let flag as Bool: out += flag ? "true" : "false"
        case let number as Int: out += String(number)
        case let number as Int64: out += String(number)
        case let number as UInt64: out += String(number)
        case let number as Int32: out += String(number)
        case let number as Double: out += number.isFinite ? "\(number)" : "null"
        case let object as [String: Any]:
            out += "{"
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                writeString(key, to: &out)
                out += ":"
                write(object[key], to: &out)
            }
            out += "}"
        case let object as [String: String]:
            write(object as [String: Any], to: &out)
        case let array as [Any]:
            out += "["
            for (index, element) in array.enumerated() {
                if index > 0 { out += "," }
                write(element, to: &out)
            }
            out += "]"
        case let array as [String]:
            write(array as [Any], to: &out)
        default:
            writeString("\(value!)", to: &out)
        }
    }

    private static func writeString(_ text: String, to out: inout String) {
        // The `--json` event stream's escaping (GetReporter), so both outputs read alike.
        out += JSONValue.quoted(text)
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) throws(SyntaxError) -> Any {
            guard depth < 512 else { throw SyntaxError() }
            skipSpace()
            guard index < bytes.count else { throw SyntaxError() }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var object: [String: Any] = [:]
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return object
                }
                while true {
                    skipSpace()
                    let key = try string()
                    skipSpace()
                    try expect(UInt8(ascii: ":"))
                    object[key] = try value(depth: depth + 1)
                    skipSpace()
                    guard index < bytes.count else { throw SyntaxError() }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    try expect(UInt8(ascii: "}"))
                    return object
                }
            case UInt8(ascii: "["):
                index += 1
                var array: [Any] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return array
                }
                while true {
                    array.append(try value(depth: depth + 1))
                    skipSpace()
                    guard index < bytes.count else { throw SyntaxError() }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    try expect(UInt8(ascii: "]"))
                    return array
                }
            case UInt8(ascii: "\""):
                return try string()
            case UInt8(ascii: "t"):
                try word("true")
                return true
            case UInt8(ascii: "f"):
                try word("false")
                return false
            case UInt8(ascii: "n"):
                try word("null")
                return JSONText.null
            default:
                return try number()
            }
        }

        mutating func expect(_ byte: UInt8) throws(SyntaxError) {
            guard index < bytes.count, bytes[index] == byte else { throw SyntaxError() }
            index += 1
        }

        mutating func word(_ text: String) throws(SyntaxError) {
            for byte in text.utf8 { try expect(byte) }
        }

        mutating func number() throws(SyntaxError) -> Any {
            let start = index
            var integral = true
            while index < bytes.count,
                let character = Optional(bytes[index]),
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(character) || character == UInt8(ascii: "-")
                    || character == UInt8(ascii: "+") || character == UInt8(ascii: ".")
                    || character == UInt8(ascii: "e") || character == UInt8(ascii: "E")
            {
                if character == UInt8(ascii: ".") || character == UInt8(ascii: "e") || character == UInt8(ascii: "E") {
                    integral = false
                }
                index += 1
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if integral, let value = Int(text) { return value }
            guard let value = Double(text) else { throw SyntaxError() }
            return value
        }

        mutating func string() throws(SyntaxError) -> String {
            try expect(UInt8(ascii: "\""))
            var scalars = String.UnicodeScalarView()
            var pendingHigh: UInt32?
            while true {
                guard index < bytes.count else { throw SyntaxError() }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return String(scalars)
                }
                if byte == UInt8(ascii: "\\") {
                    index += 1
                    guard index < bytes.count else { throw SyntaxError() }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "b"): scalars.append("\u{8}")
                    case UInt8(ascii: "f"): scalars.append("\u{C}")
                    case UInt8(ascii: "u"):
                        guard index + 4 <= bytes.count,
                            let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                        else { throw SyntaxError() }
                        index += 4
                        if (0xD800..<0xDC00).contains(code) {
                            pendingHigh = code
                            continue
                        }
                        if (0xDC00..<0xE000).contains(code), let high = pendingHigh {
                            let combined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)
                            scalars.append(Unicode.Scalar(combined) ?? "\u{FFFD}")
                        } else {
                            scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                        }
                        pendingHigh = nil
                        continue
                    default: scalars.append(Unicode.Scalar(escape))
                    }
                    pendingHigh = nil
                    continue
                }
                // A run of plain bytes up to the next quote or backslash, decoded as UTF-8.
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                    index += 1
                }
                scalars.append(contentsOf: String(decoding: bytes[start..<index], as: UTF8.self).unicodeScalars)
                pendingHigh = nil
            }
        }
    }
}
