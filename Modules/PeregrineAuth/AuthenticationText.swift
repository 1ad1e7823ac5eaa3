import PeregrineCore

/// Small text helpers shared by the parser, the error messages and the header builders.
enum AuthenticationText {
    /// A server-supplied string made safe for a message: control characters escaped and the
    /// length bounded, so a hostile header never floods a log or breaks a line.
    static func excerpt(_ text: String, limit: Int = 80) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                result += "…"
                break
            }
            if scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value) {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return result
    }

    /// The text as an HTTP quoted-string (RFC 9110 §5.6.4): `"` and `\` escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for character in text.unicodeScalars {
            if character == "\"" || character == "\\" { result += "\\" }
            result.unicodeScalars.append(character)
        }
        return result + "\""
    }

    /// Whether `byte` is a `tchar` of RFC 9110 §5.6.2.
    static func isTokenCharacter(_ byte: UInt8) -> Bool { HTTPToken.isTokenByte(byte) }

    /// Whether `text` is a non-empty token.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenCharacter)
    }

    /// Lower-case hexadecimal of a 32-bit count, eight digits, as Digest's `nc` is written.
    static func nonceCountText(_ count: UInt32) -> String {
        let digits = String(count, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
