import PeregrineVerification
import Testing

/// Picking the entry for a file name.
@Suite("ChecksumList lookup")
struct ChecksumListLookupTests {
    static let list = try! ChecksumList(
        parsing: """
            \(String(repeating: "1", count: 64))  app-1.0.tar.gz
            \(String(repeating: "2", count: 64)) *./app-1.0.iso
            \(String(repeating: "3", count: 64))  linux/amd64/tool
            \(String(repeating: "4", count: 64))  darwin/arm64/tool
            \(String(repeating: "5", count: 64))  docs/readme.txt
            MD5 (docs/readme.txt) = \(String(repeating: "6", count: 32))
            """)

    @Test func exactNameIsFound() throws {
        #expect(try Self.list.checksum(forFileNamed: "app-1.0.tar.gz").hex == String(repeating: "1", count: 64))
        #expect(Self.list.entry(forFileNamed: "linux/amd64/tool")?.line == 3)
    }

    @Test func leadingDotSlashIsIgnored() {
        #expect(Self.list.entry(forFileNamed: "app-1.0.iso")?.line == 2)
        #expect(Self.list.entry(forFileNamed: "./app-1.0.tar.gz")?.line == 1)
    }

    @Test func lastPathComponentFindsAFileInAFolder() {
        #expect(Self.list.entry(forFileNamed: "/home/me/Downloads/app-1.0.tar.gz")?.line == 1)
        #expect(Self.list.entry(forFileNamed: "readme.txt")?.line == 5)
    }

    @Test func sameNameInTwoFoldersIsAmbiguousUnlessTheFolderIsGiven() {
        #expect(Self.list.entry(forFileNamed: "tool") == nil)
        #expect(Self.list.entry(forFileNamed: "darwin/arm64/tool")?.line == 4)
    }

    @Test func missingFileIsATypedError() {
        let error = #expect(throws: VerificationError.self) { try Self.list.checksum(forFileNamed: "other.zip") }
        #expect(error?.code == .noChecksumForFile)
        #expect(error?.message.contains("\"other.zip\"") == true)
    }
}
