import Foundation
import PeregrineVerification
import TestSupport
import Testing

/// `peregrine get --checksum-url`: the expected digest read from a checksum file on the server.
@Suite("peregrine get --checksum-url")
struct GetChecksumURLCommandTests {
    @Test func aSumsListVerifiesEachFile() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let first = ChecksumTestFiles.bytes(300_000, seed: 0xD1)
        let second = ChecksumTestFiles.bytes(200_000, seed: 0xD2)
        try ChecksumTestFiles.write(first, to: server.documentPath("a.bin"))
        try ChecksumTestFiles.write(second, to: server.documentPath("b.bin"))
        let list = """
            \(try ChecksumTestFiles.checksum(.sha256, of: second).hex)  b.bin
            \(try ChecksumTestFiles.checksum(.sha256, of: first).hex) *a.bin
            """
        try ChecksumTestFiles.write(Array(list.utf8), to: server.documentPath("SHA256SUMS"))
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-checksum-url")
        defer { downloads.remove() }

        let output = try await VerifyCommandExecutable.run([
            "get", server.httpURL("/a.bin"), server.httpURL("/b.bin"), "-d", downloads.path, "--quiet",
            "--checksum-url", server.httpURL("/SHA256SUMS"),
        ])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).sorted() == ["a.bin", "b.bin"])
    }

    /// Many URLs as arguments (taken out of the command line before the argument parser, whose
    /// time grows with the square of their number), between options, one of which takes a URL
    /// as its value: every URL is downloaded once, and the option keeps its value.
    @Test func manyURLsAmongOptionsAreEachDownloadedOnce() async throws {
        let logs = try TemporaryDirectory(prefix: "peregrine-cli-many-urls-log")
        defer { logs.remove() }
        let accessLog = logs.path("access.log")
        let server = try NginxServer(NginxServer.Configuration(extraDirectives: ["access_log \(accessLog);"]))
        defer { server.stop() }
        try await server.start()
        var sums = ""
        var names: [String] = []
        for index in 0..<48 {
            let name = "m\(index).bin"
            let data = ChecksumTestFiles.bytes(1_000 + index, seed: UInt64(0xE0 + index))
            try ChecksumTestFiles.write(data, to: server.documentPath(name))
            sums += "\(try ChecksumTestFiles.checksum(.sha256, of: data).hex)  \(name)\n"
            names.append(name)
        }
        try ChecksumTestFiles.write(Array(sums.utf8), to: server.documentPath("SHA256SUMS"))
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-many-urls")
        defer { downloads.remove() }
        let urls = names.map { server.httpURL("/" + $0) }
        let output = try await VerifyCommandExecutable.run(
            ["get"] + urls[..<20] + ["-d", downloads.path, "-qj", "4", "--checksum-url", server.httpURL("/SHA256SUMS")]
                + urls[20...] + ["--retry", "0"])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).sorted() == names.sorted())
        let requests = try String(contentsOfFile: accessLog, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("GET /m") }
        #expect(requests.count == names.count, "\(requests)")
    }

    @Test func aSingleDigestFileThatDoesNotMatchKeepsTheFileAside() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let data = ChecksumTestFiles.bytes(100_000, seed: 0xD3)
        try ChecksumTestFiles.write(data, to: server.documentPath("f.bin"))
        let wrong = try ChecksumTestFiles.wrongChecksum(.sha256, for: data)
        try ChecksumTestFiles.write(Array("\(wrong.hex)\n".utf8), to: server.documentPath("f.bin.sha256"))
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-checksum-url")
        defer { downloads.remove() }

        let output = try await VerifyCommandExecutable.run([
            "get", server.httpURL("/f.bin"), "-d", downloads.path, "--quiet",
            "--checksum-url", server.httpURL("/f.bin.sha256"),
        ])
        #expect(output.status != 0)
        #expect(output.errorText.contains("expected \(wrong.hex)"), "\(output.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path) == ["f.bin.mismatch"])
    }

    @Test func aMissingChecksumFileOrEntryFailsWithoutAFile() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let data = ChecksumTestFiles.bytes(10_000, seed: 0xD4)
        try ChecksumTestFiles.write(data, to: server.documentPath("f.bin"))
        let other = try ChecksumTestFiles.checksum(.sha256, of: [1])
        try ChecksumTestFiles.write(
            Array("\(other.hex)  x.bin\n\(other.hex)  y.bin\n".utf8), to: server.documentPath("SHA256SUMS"))
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-checksum-url")
        defer { downloads.remove() }

        let missing = try await VerifyCommandExecutable.run([
            "get", server.httpURL("/f.bin"), "-d", downloads.path, "--quiet",
            "--checksum-url", server.httpURL("/nope.sha256"),
        ])
        #expect(missing.status != 0)
        #expect(missing.errorText.contains("404"), "\(missing.errorText)")
        let noEntry = try await VerifyCommandExecutable.run([
            "get", server.httpURL("/f.bin"), "-d", downloads.path, "--quiet",
            "--checksum-url", server.httpURL("/SHA256SUMS"),
        ])
        #expect(noEntry.status != 0)
        #expect(noEntry.errorText.contains("no checksum for file"), "\(noEntry.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)

        let both = try await VerifyCommandExecutable.run([
            "get", server.httpURL("/f.bin"), "-d", downloads.path, "--checksum", other.description,
            "--checksum-url", server.httpURL("/SHA256SUMS"),
        ])
        #expect(both.status != 0)
        #expect(both.errorText.contains("not both"), "\(both.errorText)")
    }
}
