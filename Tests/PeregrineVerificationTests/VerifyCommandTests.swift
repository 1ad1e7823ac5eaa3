import Foundation
import PeregrineVerification
import TestSupport
import Testing

/// `peregrine verify FILE --checksum …` and `peregrine verify --sums LIST`: exit 0 when every file
/// matches, 1 otherwise, one clear line per file.
@Suite("peregrine verify")
struct VerifyCommandTests {
    static let data = ChecksumTestFiles.bytes(3 << 20, seed: 0xE1)

    @Test func matchingChecksumExitsZero() async throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-cli-verify")
        defer { directory.remove() }
        try ChecksumTestFiles.write(Self.data, to: directory.path("f.bin"))
        let checksum = try ChecksumTestFiles.checksum(.sha256, of: Self.data)
        let output = try await VerifyCommandExecutable.run(
            ["verify", "f.bin", "--checksum", checksum.description], in: directory.path)
        #expect(output.status == 0, "\(output.errorText)")
        #expect(output.text == "f.bin: OK (sha256)\n")
        let base64 = try await VerifyCommandExecutable.run(
            ["verify", "f.bin", "--checksum", "sha-256=:\(checksum.base64):"], in: directory.path)
        #expect(base64.status == 0, "\(base64.errorText)")
    }

    @Test func mismatchExitsSevenAsGetDoesAndNamesBothDigests() async throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-cli-verify")
        defer { directory.remove() }
        try ChecksumTestFiles.write(Self.data, to: directory.path("f.bin"))
        let actual = try ChecksumTestFiles.checksum(.sha256, of: Self.data)
        let wrong = try ChecksumTestFiles.wrongChecksum(.sha256, for: Self.data)
        let output = try await VerifyCommandExecutable.run(
            ["verify", "f.bin", "--checksum", wrong.description], in: directory.path)
        #expect(output.status == 7)
        #expect(output.text == "f.bin: FAILED sha256 mismatch: expected \(wrong.hex), actual \(actual.hex)\n")
        #expect(output.errorText.contains("1 of 1 file did not verify"))
    }

    @Test func missingFileExitsOne() async throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-cli-verify")
        defer { directory.remove() }
        let checksum = try ChecksumTestFiles.checksum(.sha256, of: [])
        let output = try await VerifyCommandExecutable.run(
            ["verify", "nope.bin", "--checksum", checksum.description], in: directory.path)
        #expect(output.status == 1)
        #expect(output.text.hasPrefix("nope.bin: FAILED unreadable file"))
    }

    @Test func sumsFileChecksEveryListedFileOrTheOnesNamed() async throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-cli-verify")
        defer { directory.remove() }
        let other = Array(Self.data[0..<1000])
        try ChecksumTestFiles.write(Self.data, to: directory.path("a.bin"))
        try ChecksumTestFiles.write(other, to: directory.path("b c.bin"))
        let list = """
            # made by sha256sum
            \(try ChecksumTestFiles.checksum(.sha256, of: Self.data).hex)  a.bin
            SHA256 (b c.bin) = \(try ChecksumTestFiles.checksum(.sha256, of: other).hex)
            """
        try ChecksumTestFiles.write(Array(list.utf8), to: directory.path("SHA256SUMS"))

        let all = try await VerifyCommandExecutable.run(["verify", "--sums", "SHA256SUMS"], in: directory.path)
        #expect(all.status == 0, "\(all.text)\(all.errorText)")
        #expect(all.text == "a.bin: OK (sha256)\nb c.bin: OK (sha256)\n")

        let named = try await VerifyCommandExecutable.run(
            ["verify", directory.path("a.bin"), "--sums", "SHA256SUMS"], in: directory.path)
        #expect(named.status == 0, "\(named.text)\(named.errorText)")

        try ChecksumTestFiles.write(Array(Self.data[0..<999]), to: directory.path("b c.bin"))
        let changed = try await VerifyCommandExecutable.run(["verify", "--sums", "SHA256SUMS"], in: directory.path)
        #expect(changed.status == 7)
        #expect(changed.text.contains("b c.bin: FAILED sha256 mismatch"))

        let unlisted = try await VerifyCommandExecutable.run(
            ["verify", "x.bin", "--sums", "SHA256SUMS"], in: directory.path)
        #expect(unlisted.status == 1)
        #expect(unlisted.text.contains("x.bin: FAILED no checksum for file"))
    }

    @Test func malformedListIsReportedWithItsLine() async throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-cli-verify")
        defer { directory.remove() }
        try ChecksumTestFiles.write(Array("# ok\nnot a checksum line\n".utf8), to: directory.path("SHA256SUMS"))
        let output = try await VerifyCommandExecutable.run(["verify", "--sums", "SHA256SUMS"], in: directory.path)
        #expect(output.status == 1)
        #expect(output.errorText.contains("SHA256SUMS line 2"), "\(output.errorText)")
    }

    @Test(arguments: [
        ["verify", "f.bin"],
        ["verify", "f.bin", "--checksum", "sha256=abc"],
        ["verify", "f.bin", "--checksum", "nonsense"],
        ["verify", "--checksum", "md5=\(String(repeating: "0", count: 32))"],
        ["verify", "f.bin", "--checksum", "md5=\(String(repeating: "0", count: 32))", "--sums", "SHA256SUMS"],
        ["verify", "--sums", "SHA256SUMS", "--algorithm", "crc32"],
    ])
    func usageErrorsExitSixtyFour(_ arguments: [String]) async throws {
        let output = try await VerifyCommandExecutable.run(arguments)
        #expect(output.status == 64, "\(output.errorText)")
    }
}
