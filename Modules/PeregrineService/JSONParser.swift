/// Parses one JSON text (RFC 8259) into a ``JSONValue``, straight from the request's bytes.
///
/// Written for the service's hot path: a request is parsed once, without `Data`, `Decodable`
/// or thrown-and-caught errors for every value (Foundation's `JSONDecoder` costed a fifth of
/// the service's CPU under load). Numbers read as `JSONDecoder` reads them into ``JSONValue``:
/// an integral value that fits `Int64` is `.integer` (also `1.0`, `1e3`), anything else a finite
/// `.double`. A name repeated in an object keeps its first value. Strings must be valid UTF-8;
/// `\u` escapes must pair their surrogates. Nesting is
/// bounded by ``maxDepth``, so no input can exhaust the stack.
///
/// Complexity: O(n) in the input's length.
struct JSONParser {
    /// Why a text is not JSON (the service answers every one with "Parse error.").
    struct Failure: Error, Sendable, Hashable {
        /// The byte offset where the text stopped being JSON.
        var offset: Int
    }

    /// Arrays and objects nested deeper than this are refused.
    static let maxDepth = 256

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses a whole text: one value, with only whitespace around it.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw Failure(offset: parser.index) }
        return value
    }

    private var failure: Failure { Failure(offset: index) }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw failure }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw failure }
        let start = word.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] { throw failure }
        index += count
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maxDepth else { throw failure }
        index += 1  // {
        // Room for a request's four members at once, not grown from one to two to four.
        var members = JSONObject(minimumCapacity: 4)
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure }
            index += 1
            skipWhitespace()
            let member = try value(depth: depth)
            // A repeated name keeps its first value, as JSONDecoder (the service's decoder before
            // this parser) reads it; found by the FuzzRPCRequest harness.
            members.addIfAbsent(key, member)
            skipWhitespace()
            guard index < bytes.count else { throw failure }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw failure
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maxDepth else { throw failure }
        index += 1  // [
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw failure }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            } else {
                throw failure
            }
        }
    }

    /// A string; `index` is at its opening quote.
    private mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        // The common case: no escapes, so the bytes are the string. ASCII (every method name,
        // token and option) needs no validation: `String(validating:as:)` is generic and
        // unspecialized here, and cost 2 % of the CPU of a `getGlobalStat` under wrk.
        var bits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                let text: String
                if bits < 0x80 {
                    text = String(decoding: slice, as: UTF8.self)
                } else {
                    guard let valid = String(validating: slice, as: UTF8.self) else { throw Failure(offset: start) }
                    text = valid
                }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure }
            bits |= byte
            index += 1
        }
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: scratch, as: UTF8.self) else { throw Failure(offset: start) }
                index += 1
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw failure }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escape)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw failure }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw failure }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw failure
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw failure }
                    scratch.append(contentsOf: String(Character(unicode)).utf8)
                default: throw failure
                }
            default:
                guard byte >= 0x20 else { throw failure }
                scratch.append(byte)
                index += 1
            }
        }
        throw failure
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw failure }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            guard try digits() > 0 else { throw failure }
        }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            integral = false
            guard try digits() > 0 else { throw failure }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            integral = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard try digits() > 0 else { throw failure }
        }
        // ASCII only, so the bytes are a valid string.
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if integral, let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else { throw Failure(offset: start) }
        // As JSONDecoder reads an integral number into Int64 first (`1.0`, `1e3`).
        if !integral, double.rounded() == double, let integer = Int64(exactly: double) { return .integer(integer) }
        return .double(double)
    }

    /// Skips decimal digits; returns how many.
    private mutating func digits() throws(Failure) -> Int {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return index - start
    }
}
