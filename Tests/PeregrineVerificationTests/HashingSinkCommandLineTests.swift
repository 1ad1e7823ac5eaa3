import Foundation
import PeregrineVerification
import TestSupport
import Testing

/// `peregrine get --checksum`: CurlTransport + HashingSink(FileSink) against a real nginx.
@Suite("peregrine get --checksum")
struct HashingSinkCommandLineTests {
    static let size = 12 << 20

    @Test func matchingChecksumPutsTheFileInPlace() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let data = ChecksumTestFiles.bytes(Self.size, seed: 0xC11)
        try ChecksumTestFiles.write(data, to: server.documentPath("f.bin"))
        let expected = try ChecksumTestFiles.checksum(.sha256, of: data)
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-checksum")
        defer { downloads.remove() }

        let output = try await VerifyCommandExecutable.run([
            "get", server.httpURL("/f.bin"), "-d", downloads.path, "--quiet", "--checksum", "sha256=\(expected.hex)",
        ])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path) == ["f.bin"])
        #expect(try FileVerifier().verify(fileAt: downloads.path("f.bin"), against: expected) == .verified)
    }

    @Test func mismatchKeepsTheFileAsideAndNamesBothDigests() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let data = ChecksumTestFiles.bytes(Self.size, seed: 0xC12)
        try ChecksumTestFiles.write(data, to: server.documentPath("f.bin"))
        let actual = try ChecksumTestFiles.checksum(.sha256, of: data)
        let wrong = try ChecksumTestFiles.wrongChecksum(.sha256, for: data)
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-checksum")
        defer { downloads.remove() }

        let output = try await VerifyCommandExecutable.run([
            "get", server.httpURL("/f.bin"), "-d", downloads.path, "--quiet", "--checksum",
            "sha256:\(wrong.hex.uppercased())",
        ])
        #expect(output.status != 0)
        let line = output.errorText.split(separator: "\n").first { $0.contains("mismatch") }.map(String.init) ?? ""
        #expect(line.contains("expected \(wrong.hex)"), "\(output.errorText)")
        #expect(line.contains("actual \(actual.hex)"), "\(output.errorText)")
        #expect(line.contains("f.bin.mismatch"), "\(output.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path) == ["f.bin.mismatch"])
        #expect(try FileVerifier().verify(fileAt: downloads.path("f.bin.mismatch"), against: actual) == .verified)
    }

    @Test func deleteMismatchedLeavesNothing() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let data = ChecksumTestFiles.bytes(1 << 20, seed: 0xC13)
        try ChecksumTestFiles.write(data, to: server.documentPath("f.bin"))
        let wrong = try ChecksumTestFiles.wrongChecksum(.md5, for: data)
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-checksum")
        defer { downloads.remove() }

        let output = try await VerifyCommandExecutable.run([
            "get", server.httpURL("/f.bin"), "-d", downloads.path, "--quiet", "--checksum", wrong.description,
            "--delete-mismatched",
        ])
        #expect(output.status != 0)
        #expect(output.errorText.contains("the file was deleted"), "\(output.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)
    }

    @Test func oneChecksumPerURLIsMatchedInOrder() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let first = ChecksumTestFiles.bytes(300_000, seed: 1)
        let second = ChecksumTestFiles.bytes(500_000, seed: 2)
        try ChecksumTestFiles.write(first, to: server.documentPath("a.bin"))
        try ChecksumTestFiles.write(second, to: server.documentPath("b.bin"))
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-checksum")
        defer { downloads.remove() }

        let output = try await VerifyCommandExecutable.run([
            "get", server.httpURL("/a.bin"), server.httpURL("/b.bin"), "-d", downloads.path, "--quiet",
            "--checksum", try ChecksumTestFiles.checksum(.sha256, of: first).description,
            "--checksum", try ChecksumTestFiles.checksum(.sha512, of: second).description,
        ])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).sorted() == ["a.bin", "b.bin"])
    }

    @Test(arguments: [
        ["--checksum", "sha257=abcd"],
        ["--checksum", "sha256=abcd"],
        ["--checksum", "sha256=\(String(repeating: "g", count: 64))"],
        ["--checksum", ""],
        [
            "--checksum", "sha256=\(String(repeating: "a", count: 64))", "--checksum",
            "md5=\(String(repeating: "a", count: 32))",
        ],
    ])
    func badChecksumIsRejectedBeforeAnyDownload(_ options: [String]) async throws {
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-checksum")
        defer { downloads.remove() }
        // Nothing listens on port 9 of 127.0.0.1: a download attempt would fail with "connection
        // failed", not with a usage error.
        let output = try await VerifyCommandExecutable.run(
            ["get", "http://127.0.0.1:9/f.bin", "-d", downloads.path, "--quiet"] + options)
        #expect(output.status == 64, "\(output.errorText)")
        #expect(output.errorText.contains("--checksum"), "\(output.errorText)")
        #expect(!output.errorText.contains("connection"), "\(output.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)
    }
}
