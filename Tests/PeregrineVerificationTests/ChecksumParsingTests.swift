import PeregrineVerification
import Testing

/// `algorithm=hex`, `algorithm:hex`, RFC 3230 and RFC 9530 base64: every form reads the same checksum.
@Suite("Checksum parsing")
struct ChecksumParsingTests {
    static let abcSHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    static let abcSHA256Base64 = "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="

    static var abc: Checksum { get throws { try ChecksumTestFiles.checksum(.sha256, of: Array("abc".utf8)) } }

    @Test(arguments: [
        "sha256=\(abcSHA256)",
        "sha256:\(abcSHA256)",
        "SHA256=\(abcSHA256.uppercased())",
        "sha-256=\(abcSHA256)",
        "SHA-256:\(abcSHA256)",
        "Sha2-256=\(abcSHA256)",
        "  sha256 = \(abcSHA256)\n",
        "sha256=BA7816bf8f01CFEA414140de5dae2223b00361a396177a9cb410ff61f20015AD",
    ])
    func hexFormsReadTheSameChecksum(_ text: String) throws {
        #expect(try Checksum(parsing: text) == (try Self.abc))
    }

    @Test(arguments: [
        "sha-256=:\(abcSHA256Base64):",
        "SHA-256=\(abcSHA256Base64)",
        "sha256=\(abcSHA256Base64)",
        "sha-256=:\(abcSHA256Base64.dropLast()):",
        "sha-256 = :\(abcSHA256Base64): ",
    ])
    func base64FormsReadTheSameChecksum(_ text: String) throws {
        #expect(try Checksum(parsing: text) == (try Self.abc))
    }

    /// The names people and tools write, per algorithm, with the digest of "abc" in base64.
    static let namesAndBase64: [(names: [String], algorithm: DigestAlgorithm, base64: String)] = [
        (["md5", "MD5"], .md5, "kAFQmDzST7DWlj99KOF/cg=="),
        (["sha1", "SHA-1", "sha", "SHA"], .sha1, "qZk+NkcGgWq6PiVxeFDCbJzQ2J0="),
        (["sha224", "SHA-224"], .sha224, "Iwl9IjQF2CKGQqR3vaJVsyqtvOS9oLP342ydpw=="),
        (
            ["sha384", "SHA-384", "sha_384"], .sha384,
            "ywB1P0WjXou1oD1pmsZQBycsMqsO3tFjGotgWkP/W+2AhgcroefMI1i67KE0yCWn"
        ),
        (
            ["sha512", "SHA-512", "sha2-512"], .sha512,
            "3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw=="
        ),
        (
            ["sha512-256", "SHA-512/256", "sha512/256", "SHA512_256"], .sha512_256,
            "UwSOJoGUHvmbLim3a0x9q+TC0MY0/G1G4OLxMQfnryM="
        ),
        (["sha3-256", "SHA3-256", "sha3_256", "SHA3256"], .sha3_256, "Ophdp0/iJbIEXBcta9OQvYVfCG4+nVJbRr/iRRFDFTI="),
        (
            ["blake2b512", "blake2b-512", "BLAKE2b-512", "BLAKE2B512", "BLAKE2b"], .blake2b512,
            "uoClP5gcTQ1qJ5e2nxL26UwhLxRoWsS3SxK7b9v/otF9h8U5Kqt5LcJS1d5FM8yVGNOKqNvxklq5I4bt1ACZIw=="
        ),
    ]

    @Test func everyAlgorithmIsReadFromEveryCommonSpellingInHexAndBase64() throws {
        for (names, algorithm, base64) in Self.namesAndBase64 {
            let expected = try ChecksumTestFiles.checksum(algorithm, of: Array("abc".utf8))
            #expect(expected.base64 == base64, "\(algorithm)")
            for name in names {
                #expect(DigestAlgorithm(name: name) == algorithm, "\(name)")
                #expect(try Checksum(parsing: "\(name)=\(expected.hex)") == expected, "\(name) hex")
                #expect(try Checksum(parsing: "\(name):\(expected.hex.uppercased())") == expected, "\(name) HEX")
                #expect(try Checksum(parsing: "\(name)=\(base64)") == expected, "\(name) base64")
                #expect(try Checksum(parsing: "\(name)=:\(base64):") == expected, "\(name) :base64:")
            }
        }
    }

    @Test func sha3512IsReadToo() throws {
        let expected = try ChecksumTestFiles.checksum(.sha3_512, of: Array("abc".utf8))
        #expect(try Checksum(parsing: "SHA3-512=\(expected.hex)") == expected)
        #expect(try Checksum(parsing: "sha3_512=:\(expected.base64):") == expected)
    }

    @Test(arguments: DigestAlgorithm.allCases)
    func descriptionParsesBackToTheSameChecksum(_ algorithm: DigestAlgorithm) throws {
        let checksum = try ChecksumTestFiles.checksum(algorithm, of: Array("round trip".utf8))
        #expect(checksum.description == "\(algorithm.rawValue)=\(checksum.hex)")
        #expect(try Checksum(parsing: checksum.description) == checksum)
        #expect(try Checksum(algorithm, base64: checksum.base64) == checksum)
        #expect(try Checksum(algorithm, hex: checksum.hex.uppercased()) == checksum)
        #expect(try Checksum(algorithm, encodedDigest: checksum.base64) == checksum)
        #expect(try Checksum(algorithm, encodedDigest: ":\(checksum.base64):") == checksum)
    }

    @Test func hexIsLowerCaseAndBase64IsPadded() throws {
        let checksum = try Checksum(parsing: "SHA256=\(Self.abcSHA256.uppercased())")
        #expect(checksum.hex == Self.abcSHA256)
        #expect(checksum.base64 == Self.abcSHA256Base64)
        #expect(checksum.algorithm == .sha256)
        #expect(checksum.digest.count == 32)
        #expect(checksum.matches(try StreamingHasher.digest(.sha256, of: Array("abc".utf8))))
        #expect(!checksum.matches(try StreamingHasher.digest(.sha256, of: Array("abd".utf8))))
    }

    @Test func checksumFromBytesChecksTheLength() throws {
        let digest = try StreamingHasher.digest(.md5, of: Array("abc".utf8))
        #expect(try Checksum(.md5, digest: digest).hex == "900150983cd24fb0d6963f7d28e17f72")
        #expect(throws: VerificationError.self) { try Checksum(.sha256, digest: digest) }
        #expect((try? Checksum(.sha256, digest: digest)) == nil)
    }
}
