/// A parsed `Content-Disposition` response header (RFC 6266), as far as file naming needs it.
///
/// `filename*` carries an RFC 8187 extended value — `UTF-8'en'%E2%82%AC%20rates.txt` — and is
/// preferred over `filename` when both are present and it decodes (UTF-8 or ISO-8859-1; other
/// charsets are ignored, as RFC 6266 §4.3 allows). Parsing is lenient where browsers are: a
/// missing disposition type, a quoted extended value, unknown parameters. The names are
/// returned as the server sent them: sanitize them with ``FileNameSanitizer`` before use.
public struct ContentDisposition: Sendable, Hashable {
    /// The disposition type, lower-cased (`attachment`, `inline`, …); empty when missing.
    public var type: String
    /// The `filename` parameter, unquoted.
    public var fileName: String?
    /// The `filename*` parameter, decoded; nil when absent or undecodable.
    public var extendedFileName: String?
    /// The language tag of `filename*`, when it had one.
    public var language: String?

    /// Parses a header value; nil when it holds neither a type nor a parameter.
    public init?(headerValue: String) {
        let segments = Self.split(headerValue)
        guard !segments.isEmpty else { return nil }
        var type = ""
        var fileName: String?
        var extended: (name: String, language: String?)?
        for (index, segment) in segments.enumerated() {
            guard let equals = segment.firstIndex(of: "=") else {
                if index == 0 { type = Self.trim(segment).lowercased() }
                continue
            }
            let name = Self.trim(segment[..<equals]).lowercased()
            let rawValue = Self.trim(segment[segment.index(after: equals)...])
            switch name {
            case "filename" where fileName == nil:
                fileName = Self.unquote(rawValue)
            case "filename*" where extended == nil:
                extended = Self.decodeExtendedValue(Self.unquote(rawValue))
            default:
                continue
            }
        }
        guard !type.isEmpty || fileName != nil || extended != nil else { return nil }
        self.type = type
        self.fileName = fileName
        self.extendedFileName = extended?.name
        self.language = extended?.language
    }

    /// The name to use: `filename*` when it decoded, else `filename`.
    public var preferredFileName: String? { extendedFileName ?? fileName }

    // MARK: Parsing

    /// Splits at semicolons outside quoted strings.
    private static func split(_ text: String) -> [Substring] {
        var parts: [Substring] = []
        var start = text.startIndex
        var inQuotes = false
        var escaped = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if escaped {
                escaped = false
            } else if inQuotes, character == "\\" {
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
            } else if character == ";", !inQuotes {
                parts.append(text[start..<index])
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        parts.append(text[start...])
        return parts.filter { !trim($0).isEmpty }
    }

    private static func trim<S: StringProtocol>(_ text: S) -> String {
        var scalars = Substring(text)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }

    /// Removes the quotes of a quoted-string and its backslash escapes; a token stays as it is.
    private static func unquote(_ value: String) -> String {
        guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { return value }
        var result = ""
        var escaped = false
        for character in value.dropFirst().dropLast() {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// Decodes `charset'language'value-chars` (RFC 8187 §3.2).
    private static func decodeExtendedValue(_ value: String) -> (name: String, language: String?)? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        guard let bytes = PercentDecoding.bytes(of: parts[2]) else { return nil }
        let name: String
        switch charset {
        case "utf-8":
            guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
            name = text
        case "iso-8859-1":
            name = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default:
            return nil
        }
        return (name, parts[1].isEmpty ? nil : String(parts[1]))
    }
}

/// Percent-decoding to bytes, for RFC 8187 values and URL path components.
enum PercentDecoding {
    /// The bytes of `text` with `%XX` decoded; nil when a `%` is not followed by two hex digits.
    static func bytes<S: StringProtocol>(of text: S) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                result.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            result.append(high << 4 | low)
        }
        return result
    }

    /// `text` percent-decoded as UTF-8; the text itself when it does not decode.
    static func string(_ text: some StringProtocol) -> String {
        guard let bytes = bytes(of: text), let decoded = String(validating: bytes, as: UTF8.self) else {
            return String(text)
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
