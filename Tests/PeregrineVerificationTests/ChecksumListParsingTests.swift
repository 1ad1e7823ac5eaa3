import PeregrineVerification
import TestSupport
import Testing

/// Reading `sha256sum`/`md5sum` output, BSD and `--tag` lines, escapes and comments.
@Suite("ChecksumList parsing")
struct ChecksumListParsingTests {
    static let sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    static let md5 = "900150983cd24fb0d6963f7d28e17f72"

    @Test func gnuTextAndBinaryModeLinesAreRead() throws {
        let list = try ChecksumList(
            parsing: """
                \(Self.sha256)  app.tar.gz
                \(Self.sha256.uppercased()) *disk image.iso
                \(Self.sha256)  dist/sub dir/file
                """)
        #expect(list.entries.map(\.fileName) == ["app.tar.gz", "disk image.iso", "dist/sub dir/file"])
        #expect(list.entries.map(\.line) == [1, 2, 3])
        #expect(list.entries.allSatisfy { $0.checksum == (try? Checksum(parsing: "sha256=\(Self.sha256)")) })
    }

    @Test func namesKeepLeadingAndTrailingSpacesAndStars() throws {
        let list = try ChecksumList(parsing: "\(Self.md5)   two spaces first \n\(Self.md5) **star\n")
        #expect(list.entries.map(\.fileName) == [" two spaces first ", "*star"])
    }

    @Test func bsdReversedSingleSpaceLinesAreRead() throws {
        let list = try ChecksumList(parsing: "\(Self.md5) notes.txt\n")
        #expect(list.entries.map(\.fileName) == ["notes.txt"])
        #expect(list.entries.first?.checksum.algorithm == .md5)
    }

    @Test func escapedNamesAreUnescaped() throws {
        // GNU: `sha256sum $'a\\b' $'new\nline' $'cr\r'` writes these.
        let list = try ChecksumList(
            parsing: """
                \\\(Self.sha256)  a\\\\b
                \\\(Self.sha256)  new\\nline
                \\\(Self.sha256) *cr\\r
                \\SHA256 (tag\\\\ged\\n) = \(Self.sha256)
                """)
        #expect(list.entries.map(\.fileName) == ["a\\b", "new\nline", "cr\r", "tag\\ged\n"])
    }

    @Test func unescapedNamesKeepTheirBackslashes() throws {
        let list = try ChecksumList(parsing: "\(Self.md5)  dir\\name\n")
        #expect(list.entries.map(\.fileName) == ["dir\\name"])
    }

    @Test func taggedLinesNameTheirAlgorithm() throws {
        let sha512 = try ChecksumTestFiles.checksum(.sha512, of: Array("abc".utf8))
        let blake = try ChecksumTestFiles.checksum(.blake2b512, of: Array("abc".utf8))
        let sha3 = try ChecksumTestFiles.checksum(.sha3_256, of: Array("abc".utf8))
        let list = try ChecksumList(
            parsing: """
                SHA256 (a.bin) = \(Self.sha256)
                MD5 (b (1).bin) = \(Self.md5.uppercased())
                SHA512 (c) = \(sha512.hex)
                BLAKE2b (d) = \(blake.hex)
                SHA3-256 (e) = ) = \(sha3.hex)
                """)
        #expect(list.entries.map(\.fileName) == ["a.bin", "b (1).bin", "c", "d", "e) = "])
        #expect(list.entries.map(\.checksum.algorithm) == [.sha256, .md5, .sha512, .blake2b512, .sha3_256])
        #expect(list.entries[4].checksum == sha3)
    }

    @Test func commentsBlankLinesAndCRLFAreSkipped() throws {
        let text =
            "# SHA256 checksums\r\n\r\n   \r\n\(Self.sha256)  one\r\n  # indented comment\n\(Self.sha256) *two\r\n"
        let list = try ChecksumList(parsing: text)
        #expect(list.entries.map(\.fileName) == ["one", "two"])
        #expect(list.entries.map(\.line) == [4, 6])
        #expect(try ChecksumList(parsing: "").entries.isEmpty)
    }

    @Test func algorithmComesFromTheDigestLengthUnlessGiven() throws {
        let sha1 = try ChecksumTestFiles.checksum(.sha1, of: [])
        let sha384 = try ChecksumTestFiles.checksum(.sha384, of: [])
        let list = try ChecksumList(parsing: "\(Self.md5)  a\n\(sha1.hex)  b\n\(sha384.hex)  c\n\(Self.sha256)  d\n")
        #expect(list.entries.map(\.checksum.algorithm) == [.md5, .sha1, .sha384, .sha256])
        let sha3 = try ChecksumList(parsing: "\(Self.sha256)  d\n", algorithm: .sha3_256)
        #expect(sha3.entries.first?.checksum.algorithm == .sha3_256)
    }

    @Test func listNamesAnnounceTheirAlgorithm() {
        #expect(ChecksumList.algorithm(forListNamed: "SHA256SUMS") == .sha256)
        #expect(ChecksumList.algorithm(forListNamed: "sha512sums.txt") == .sha512)
        #expect(ChecksumList.algorithm(forListNamed: "MD5SUMS") == .md5)
        #expect(ChecksumList.algorithm(forListNamed: "B2SUMS") == .blake2b512)
        #expect(ChecksumList.algorithm(forListNamed: "SHA3-256SUMS") == .sha3_256)
        #expect(ChecksumList.algorithm(forListNamed: "app-1.0.iso.sha256") == .sha256)
        #expect(ChecksumList.algorithm(forListNamed: "app.tar.gz.md5") == .md5)
        #expect(ChecksumList.algorithm(forListNamed: "CHECKSUMS") == nil)
        #expect(ChecksumList.algorithm(forListNamed: "notes.txt") == nil)
    }

    @Test func fileIsReadWithTheAlgorithmOfItsName() throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-sums")
        defer { directory.remove() }
        let path = directory.path("SHA3-256SUMS")
        try ChecksumTestFiles.write(Array("\(Self.sha256)  f.bin\n".utf8), to: path)
        let list = try ChecksumList(contentsOfFile: path)
        #expect(list.entries.first?.checksum.algorithm == .sha3_256)
        let explicit = try ChecksumList(contentsOfFile: path, algorithm: .sha256)
        #expect(explicit.entries.first?.checksum.algorithm == .sha256)
    }

    struct BadList: Sendable, CustomTestStringConvertible {
        var text: String
        var line: Int
        var code: VerificationError.Code
        var testDescription: String { "line \(line): \(text.split(separator: "\n").last.map(String.init) ?? "")" }
    }

    static let badLists: [BadList] = [
        BadList(text: "just some words\n", line: 1, code: .malformedChecksumList),
        BadList(text: "\(sha256)  ok\n\(sha256)\n", line: 2, code: .malformedChecksumList),
        BadList(text: "\(sha256)  ok\n\n\(sha256)  \n", line: 3, code: .malformedChecksumList),
        BadList(text: "\(sha256.dropLast())  odd\n", line: 1, code: .malformedChecksumList),
        BadList(text: "abcdef  short\n", line: 1, code: .malformedChecksumList),
        BadList(text: "\(sha256.dropLast())g  typo\n", line: 1, code: .malformedChecksumList),
        BadList(text: "SHA256 (x) = \(md5)\n", line: 1, code: .malformedChecksumList),
        BadList(text: "SHA256 (x) = nothex\n", line: 1, code: .malformedChecksumList),
        BadList(text: "CRC32 (x) = 12345678\n", line: 1, code: .unsupportedAlgorithm),
        BadList(text: "\\\(sha256)  bad\\escape\n", line: 1, code: .malformedChecksumList),
    ]

    @Test(arguments: badLists)
    func malformedLineIsATypedErrorWithItsNumber(_ bad: BadList) {
        let error = #expect(throws: VerificationError.self) { try ChecksumList(parsing: bad.text) }
        #expect(error?.code == bad.code, "\(String(describing: error))")
        #expect(error?.line == bad.line, "\(String(describing: error))")
        #expect(error?.message.hasPrefix("line \(bad.line): ") == true, "\(String(describing: error))")
    }

    @Test func explicitAlgorithmRejectsDigestsOfAnotherLength() {
        let error = #expect(throws: VerificationError.self) {
            try ChecksumList(parsing: "\(Self.md5)  f\n", algorithm: .sha256)
        }
        #expect(error?.code == .malformedChecksumList)
        #expect(error?.message.contains("64 hex digits") == true)
    }

    @Test func messageOfAHugeBadLineIsBounded() {
        let text = String(repeating: "z", count: 1_000_000)
        let error = #expect(throws: VerificationError.self) { try ChecksumList(parsing: text) }
        #expect((error?.description.count ?? .max) < 300)
    }

    @Test func errorsOfAFileNameTheFileAndLine() throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-sums")
        defer { directory.remove() }
        let path = directory.path("SHA256SUMS")
        try ChecksumTestFiles.write(Array("\(Self.sha256)  f.bin\ngarbage\n".utf8), to: path)
        let error = #expect(throws: VerificationError.self) { try ChecksumList(contentsOfFile: path) }
        #expect(error?.line == 2)
        #expect(error?.message.hasPrefix("\(path) line 2: ") == true, "\(String(describing: error))")
        let missing = #expect(throws: VerificationError.self) {
            try ChecksumList(contentsOfFile: directory.path("nope"))
        }
        #expect(missing?.code == .unreadableFile)
    }
}
