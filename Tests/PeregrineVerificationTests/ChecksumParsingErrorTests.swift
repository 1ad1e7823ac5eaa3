import PeregrineVerification
import Testing

/// Every malformed checksum is a typed error at parse time, with a bounded, useful message.
@Suite("Checksum parsing errors")
struct ChecksumParsingErrorTests {
    static let hex64 = String(repeating: "ab", count: 32)

    struct Case: Sendable, CustomTestStringConvertible {
        var text: String
        var code: VerificationError.Code
        var messageContains: String
        var testDescription: String { text.count > 40 ? "\(text.prefix(40))…" : text.debugDescription }
    }

    static let cases: [Case] = [
        // Empty strings.
        Case(text: "", code: .emptyChecksum, messageContains: "empty"),
        Case(text: "   \n\t", code: .emptyChecksum, messageContains: "empty"),
        Case(text: "sha256=", code: .emptyChecksum, messageContains: "no digest"),
        Case(text: "sha256:   ", code: .emptyChecksum, messageContains: "no digest"),
        Case(text: "sha-256=::", code: .emptyChecksum, messageContains: "empty"),
        // No separator, no algorithm.
        Case(text: hex64, code: .malformedChecksum, messageContains: "sha256=<64 hex digits>"),
        Case(text: "=\(hex64)", code: .malformedChecksum, messageContains: "names no algorithm"),
        // Unknown algorithms.
        Case(text: "sha257=\(hex64)", code: .unsupportedAlgorithm, messageContains: "\"sha257\""),
        Case(text: "crc32c=:AAAAAA==:", code: .unsupportedAlgorithm, messageContains: "supported: md5"),
        Case(text: "blake2b-256=\(hex64)", code: .unsupportedAlgorithm, messageContains: "blake2b-256"),
        Case(text: "sha3-384=\(hex64)", code: .unsupportedAlgorithm, messageContains: "sha3-384"),
        // Hex of the wrong length.
        Case(text: "sha256=abc", code: .wrongDigestLength, messageContains: "64 hex digits"),
        Case(text: "sha256=\(hex64)ab", code: .wrongDigestLength, messageContains: "has 66"),
        Case(text: "md5=\(hex64)", code: .wrongDigestLength, messageContains: "32 hex digits"),
        Case(text: "sha512=\(hex64)", code: .wrongDigestLength, messageContains: "128 hex digits"),
        Case(text: "sha256=\(String(repeating: "a", count: 44))", code: .wrongDigestLength, messageContains: "has 44"),
        // Non-hex characters.
        Case(text: "sha256=\(String(hex64.dropLast()))g", code: .invalidHex, messageContains: "position 64"),
        Case(text: "sha256=zz\(String(hex64.dropFirst(2)))", code: .invalidHex, messageContains: "\"z\" at position 1"),
        Case(
            text: "sha256=\(String(hex64.prefix(10))) \(String(hex64.dropFirst(11)))", code: .invalidHex,
            messageContains: "position 11"),
        Case(text: "md5=xyz", code: .invalidHex, messageContains: "not a hexadecimal digit"),
        Case(text: "sha1=0x\(String(repeating: "0", count: 38))", code: .invalidHex, messageContains: "\"x\""),
        // Bad base64.
        Case(
            text: "sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0!:", code: .invalidBase64,
            messageContains: "\"!\""),
        Case(
            text: "sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIA:", code: .wrongDigestLength,
            messageContains: "decodes to 30"),
        Case(
            text: "sha-256=:ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0===:", code: .invalidBase64,
            messageContains: "padding"),
        Case(text: "sha-256=:a:", code: .invalidBase64, messageContains: "length"),
        Case(text: "sha-256=:====:", code: .invalidBase64, messageContains: "no digits"),
        Case(
            text: "SHA-256=ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=ungW", code: .invalidBase64,
            messageContains: "position 44"),
        Case(
            text: "SHA-256=ungWv48Bz+pBQUDeXa4iI7ADYaOW_3qctBD/YfIAFa0=", code: .invalidBase64, messageContains: "\"_\""
        ),
        Case(text: "md5=kAFQmDzST7DWlj99KOF/cg=", code: .invalidBase64, messageContains: "padding"),
    ]

    @Test(arguments: cases)
    func malformedChecksumIsATypedError(_ testCase: Case) {
        let error = #expect(throws: VerificationError.self) { try Checksum(parsing: testCase.text) }
        #expect(error?.code == testCase.code, "\(String(describing: error))")
        #expect(error?.message.contains(testCase.messageContains) == true, "\(String(describing: error))")
    }

    @Test func messagesAreBoundedWhateverTheInput() {
        let huge = "sha256=" + String(repeating: "q", count: 100_000)
        let error = #expect(throws: VerificationError.self) { try Checksum(parsing: huge) }
        #expect(error?.code == .invalidHex)
        #expect((error?.description.count ?? .max) < 300)
        let hugeName = String(repeating: "x", count: 100_000) + "=abc"
        let nameError = #expect(throws: VerificationError.self) { try Checksum(parsing: hugeName) }
        #expect(nameError?.code == .unsupportedAlgorithm)
        #expect((nameError?.description.count ?? .max) < 300)
    }

    @Test func controlCharactersAreEscapedInMessages() {
        let error = #expect(throws: VerificationError.self) { try Checksum(parsing: "sha256=ab\u{1B}[31m") }
        #expect(error?.message.contains("\u{1B}") == false)
        #expect(error?.message.contains("\\u{1b}") == true)
    }

    @Test func directInitializersRejectTheirOwnBadInput() {
        #expect(throws: VerificationError.self) { try Checksum(.sha256, hex: "") }
        #expect(throws: VerificationError.self) { try Checksum(.sha256, hex: "abcd") }
        #expect(throws: VerificationError.self) { try Checksum(.sha256, base64: "") }
        #expect(throws: VerificationError.self) { try Checksum(.sha256, base64: "kAFQmDzST7DWlj99KOF/cg==") }
        #expect(throws: VerificationError.self) { try Checksum(.md5, encodedDigest: "*") }
    }
}
