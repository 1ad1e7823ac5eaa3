/// Hex and base64 text of digests: strict decoders with typed errors, and the base64 encoder.
///
/// Written here rather than taken from Foundation so that the module stays on libcrypto and
/// the standard library, and so that every rejection says which character was wrong.
enum DigestText {
    /// The value of a hexadecimal digit in either case, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether every character is a hexadecimal digit.
    static func isHex(_ text: Substring.UTF8View) -> Bool { text.allSatisfy { hexValue($0) != nil } }

    /// Decodes hex of exactly `algorithm.byteCount` bytes, in either case.
    ///
    /// - Throws: ``VerificationError/Code/invalidHex`` naming the first bad character and its
    ///   position, or ``VerificationError/Code/wrongDigestLength``.
    static func decodeHex(_ text: Substring, for algorithm: DigestAlgorithm) throws(VerificationError) -> [UInt8] {
        var position = 0
        for character in text {
            position += 1
            guard character.isASCII, let byte = character.asciiValue, hexValue(byte) != nil else {
                throw VerificationError(
                    .invalidHex,
                    "\(VerificationError.quoted(String(character))) at position \(position) of the \(algorithm) digest "
                        + "\(VerificationError.quoted(text)) is not a hexadecimal digit")
            }
        }
        let utf8 = Array(text.utf8)
        guard utf8.count == 2 * algorithm.byteCount else {
            throw VerificationError(
                .wrongDigestLength,
                "a \(algorithm) digest has \(2 * algorithm.byteCount) hex digits, "
                    + "\(VerificationError.quoted(text)) has \(utf8.count)")
        }
        var bytes = [UInt8](repeating: 0, count: algorithm.byteCount)
        for index in bytes.indices {
            bytes[index] = hexValue(utf8[2 * index])! << 4 | hexValue(utf8[2 * index + 1])!
        }
        return bytes
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let alphabetValues: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    /// The length of the padded base64 text of `byteCount` bytes.
    static func base64Length(of byteCount: Int) -> Int { (byteCount + 2) / 3 * 4 }

    /// Whether every character belongs to the standard base64 alphabet or is `=`.
    static func looksLikeBase64(_ text: Substring.UTF8View) -> Bool {
        text.allSatisfy { alphabetValues[Int($0)] != 0xFF || $0 == UInt8(ascii: "=") }
    }

    /// Decodes standard base64 (RFC 4648 §4) of exactly `algorithm.byteCount` bytes. Padding
    /// may be left out (RFC 8941 asks parsers to accept that); when present it must be right.
    ///
    /// - Throws: ``VerificationError/Code/invalidBase64`` or ``VerificationError/Code/wrongDigestLength``.
    static func decodeBase64(_ text: Substring, for algorithm: DigestAlgorithm) throws(VerificationError) -> [UInt8] {
        let utf8 = Array(text.utf8)
        func invalid(_ why: String) -> VerificationError {
            VerificationError(
                .invalidBase64, "the \(algorithm) digest \(VerificationError.quoted(text)) is not base64: \(why)")
        }
        var end = utf8.count
        while end > 0, utf8[end - 1] == UInt8(ascii: "=") { end -= 1 }
        let padding = utf8.count - end
        guard end > 0 else { throw invalid("it holds no digits") }
        if padding > 0, padding > 2 || utf8.count % 4 != 0 { throw invalid("its \"=\" padding is wrong") }
        guard end % 4 != 1 else { throw invalid("its length \(end) is impossible for base64") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(end * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for index in 0..<end {
            let value = alphabetValues[Int(utf8[index])]
            guard value != 0xFF else {
                let character = String(decoding: [utf8[index]], as: UTF8.self)
                throw invalid("\(VerificationError.quoted(character)) at position \(index + 1) is not a base64 digit")
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        guard bytes.count == algorithm.byteCount else {
            throw VerificationError(
                .wrongDigestLength,
                "a \(algorithm) digest has \(algorithm.byteCount) bytes (\(base64Length(of: algorithm.byteCount)) "
                    + "base64 characters), \(VerificationError.quoted(text)) decodes to \(bytes.count)")
        }
        return bytes
    }

    /// Standard, padded base64.
    static func encodeBase64(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(base64Length(of: bytes.count))
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for digit in 0..<4 {
                if digit <= count {
                    text.append(alphabet[Int(group >> UInt32(18 - 6 * digit) & 0x3F)])
                } else {
                    text.append(UInt8(ascii: "="))
                }
            }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }
}
