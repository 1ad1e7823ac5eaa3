import Foundation
import PeregrineEngine
import PeregrineTransport
import PeregrineVerification
import TestSupport
import Testing

/// Bodies from a real nginx, as its socket delivers them, through a hashing sink in front of a
/// `FileSink`: whole, and resumed with a range.
///
/// The libcurl path (`CurlTransport` + `HashingSink(FileSink)`) is covered end to end through
/// the `peregrine get --checksum` tests in `HashingSinkCommandLineTests`; this target does not
/// depend on `PeregrineCurlTransport`.
@Suite("HashingSink with nginx")
struct HashingSinkNginxTests {
    static let size = 24 << 20

    /// Sends `GET path` (from byte `start` on, with a range) and streams the body into `sink`
    /// in chunks of varying sizes; returns the status.
    static func fetch(_ server: NginxServer, _ path: String, from start: Int64 = 0, into sink: HashingSink) throws
        -> Int
    {
        let client = try LoopbackHTTPClient(port: server.httpPort)
        client.sendRequest("GET", path, extraHeaders: start > 0 ? "Range: bytes=\(start)-\r\n" : "")
        let head = try #require(client.readHead(), "no response head from nginx")
        let length = try #require(head.headers["Content-Length"].flatMap { Int($0) }, "no Content-Length")
        var generator = SeededRandom(seed: UInt64(start) &+ 99)
        var offset = start
        var remaining = length
        while remaining > 0 {
            let chunk = client.readBytes(min(remaining, Int.random(in: 1...300_000, using: &generator)))
            try #require(!chunk.isEmpty, "nginx closed the connection \(remaining) bytes early")
            try chunk.withUnsafeBytes { try sink.write($0, at: offset) }
            offset += Int64(chunk.count)
            remaining -= chunk.count
        }
        try sink.flush()
        return head.status
    }

    @Test func downloadHashedWhileWrittenIsVerifiedAndAWrongChecksumIsAMismatch() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let data = ChecksumTestFiles.bytes(Self.size, seed: 0x4E61)
        try ChecksumTestFiles.write(data, to: server.documentPath("f.bin"))
        let expected = try ChecksumTestFiles.checksum(.sha256, of: data)
        let downloads = try TemporaryDirectory(prefix: "peregrine-nginx-hashing")
        defer { downloads.remove() }

        let file = try FileSink(path: downloads.path("f.bin"))
        let sink = try HashingSink(.sha256, wrapping: file)
        #expect(try Self.fetch(server, "/f.bin", into: sink) == 200)
        try file.close()
        #expect(try sink.verify(against: expected) == .verified)
        #expect(try FileVerifier().verify(fileAt: downloads.path("f.bin"), against: expected) == .verified)

        let wrong = try ChecksumTestFiles.wrongChecksum(.sha256, for: data)
        let again = try FileSink(path: downloads.path("g.bin"))
        let mismatching = try HashingSink(.sha256, wrapping: again)
        #expect(try Self.fetch(server, "/f.bin", into: mismatching) == 200)
        try again.close()
        #expect(try mismatching.verify(against: wrong) == .mismatch(expected: wrong, actual: expected))
    }

    @Test func resumedDownloadPrimedFromDiskIsVerified() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let data = ChecksumTestFiles.bytes(Self.size, seed: 0x4E62)
        try ChecksumTestFiles.write(data, to: server.documentPath("f.bin"))
        let expected = try ChecksumTestFiles.checksum(.sha256, of: data)
        let downloads = try TemporaryDirectory(prefix: "peregrine-nginx-hashing")
        defer { downloads.remove() }
        let path = downloads.path("f.bin")
        // An interrupted first attempt left 10 MiB + 123 bytes on disk.
        let resumeAt = (10 << 20) + 123
        try ChecksumTestFiles.write(Array(data[0..<resumeAt]), to: path)

        let file = try FileSink(path: path, mode: .keepExisting)
        let sink = try HashingSink(.sha256, wrapping: file)
        try await sink.prime(fromFileAt: path, length: Int64(resumeAt))
        #expect(try Self.fetch(server, "/f.bin", from: Int64(resumeAt), into: sink) == 206)
        try file.close()
        #expect(try sink.verify(against: expected) == .verified)
        #expect(try FileVerifier().verify(fileAt: path, against: expected) == .verified)
    }
}
