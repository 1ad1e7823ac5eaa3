import Foundation
import PeregrineVerification
import TestSupport
import Testing

/// Verifying files on disk: streamed reads give the one-shot digest; mismatches and unreadable
/// files are told apart.
@Suite("FileVerifier")
struct FileVerifierTests {
    static let data = ChecksumTestFiles.bytes((2 << 20) + 333, seed: 77)

    @Test(arguments: DigestAlgorithm.allCases, [4096, 5000, 1 << 20])
    func fileDigestEqualsTheOneShotDigest(_ algorithm: DigestAlgorithm, bufferSize: Int) throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-verify")
        defer { directory.remove() }
        let path = directory.path("file.bin")
        try ChecksumTestFiles.write(Self.data, to: path)
        let verifier = FileVerifier(bufferSize: bufferSize)
        let expected = try ChecksumTestFiles.checksum(algorithm, of: Self.data)
        #expect(try verifier.checksum(ofFileAt: path, algorithm: algorithm) == expected)
        #expect(try verifier.verify(fileAt: path, against: expected) == .verified)
    }

    @Test func changedFileIsAMismatchNamingTheActualDigest() throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-verify")
        defer { directory.remove() }
        let path = directory.path("file.bin")
        let expected = try ChecksumTestFiles.checksum(.sha256, of: Self.data)
        var changed = Self.data
        changed[changed.count / 2] ^= 1
        try ChecksumTestFiles.write(changed, to: path)
        let actual = try ChecksumTestFiles.checksum(.sha256, of: changed)
        #expect(
            try FileVerifier().verify(fileAt: path, against: expected) == .mismatch(expected: expected, actual: actual))
    }

    @Test func emptyFileHasTheDigestOfNothing() throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-verify")
        defer { directory.remove() }
        let path = directory.path("empty")
        try ChecksumTestFiles.write([], to: path)
        let expected = try Checksum(parsing: "sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(try FileVerifier().verify(fileAt: path, against: expected) == .verified)
    }

    @Test func missingFileIsUnreadable() throws {
        let expected = try ChecksumTestFiles.checksum(.sha256, of: [])
        let error = #expect(throws: VerificationError.self) {
            try FileVerifier().verify(fileAt: "/nonexistent/peregrine/file.bin", against: expected)
        }
        #expect(error?.code == .unreadableFile)
        #expect(error?.message.contains("/nonexistent/peregrine/file.bin") == true)
        #expect(error?.message.contains("No such file") == true)
    }

    @Test func directoryIsUnreadable() throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-verify")
        defer { directory.remove() }
        let error = #expect(throws: VerificationError.self) {
            try FileVerifier().checksum(ofFileAt: directory.path, algorithm: .md5)
        }
        #expect(error?.code == .unreadableFile)
        #expect(error?.message.contains("directory") == true)
    }

    @Test func descriptorIsReadFromItsPositionToItsEnd() throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-verify")
        defer { directory.remove() }
        let path = directory.path("file.bin")
        try ChecksumTestFiles.write(Self.data, to: path)
        let handle = try #require(FileHandle(forReadingAtPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: 1000)
        let checksum = try FileVerifier().checksum(ofDescriptor: handle.fileDescriptor, algorithm: .sha256)
        #expect(checksum == (try ChecksumTestFiles.checksum(.sha256, of: Array(Self.data[1000...]))))
    }

    @Test func tinyBufferSizesAreRaisedToAPage() {
        #expect(FileVerifier(bufferSize: 1).bufferSize == 4096)
        #expect(FileVerifier().bufferSize == 1 << 20)
    }
}
