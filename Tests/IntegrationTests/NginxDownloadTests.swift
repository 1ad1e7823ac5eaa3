import Foundation
import PeregrineCore
import PeregrineCurlTransport
import PeregrineTransport
import TestSupport
import Testing

/// Whole downloads from a real nginx through libcurl: the bytes, the head, failures by status.
@Suite("CurlTransport downloads from nginx")
struct NginxDownloadTests {
    @Test func wholeFileArrivesIntactThroughTheTemporaryFile() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let size = 64 << 20
        let servedDigest = try RandomFile.write(size: size, to: server.documentPath("/random.bin"))
        let downloads = try TemporaryDirectory(prefix: "peregrine-downloads")
        defer { downloads.remove() }
        let destination = downloads.path("random.bin")
        let transport = CurlTransport()
        defer { transport.shutdown() }

        let record = try await TemporaryFileDownload.run(
            try TransferRequest(url: server.httpURL("/random.bin")), on: transport, to: destination)

        let summary = try #require(record.summary, "the download failed: \(String(describing: record.error))")
        #expect(summary.head.status == 200)
        // HTTPHeaders holds values "without surrounding white space": no line ends either.
        #expect(
            summary.head.headers.filter { $0.value.contains(where: \.isNewline) }.map(\.name) == [],
            "header values keep their line ends")
        #expect(summary.head.contentLength == Int64(size))
        #expect(summary.receivedBytes == Int64(size))
        #expect(summary.redirectCount == 0)
        #expect(record.heads.count == 1)
        #expect(record.completionCount == 1)
        #expect(FileDigest.size(ofFileAt: destination) == Int64(size))
        #expect(try FileDigest.sha256(ofFileAt: destination) == servedDigest)
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path) == ["random.bin"])
    }

    @Test func notFoundFailsWithHTTPStatusAndWritesNothing() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let sink = CountingSink(MemorySink())

        let record = try await TransferMonitor.run(
            try TransferRequest(url: server.httpURL("/missing.bin")), on: transport, sink: sink)

        let error = try #require(record.error, "a 404 must not succeed")
        #expect(error.code == .httpStatus)
        #expect(error.httpStatus == 404)
        #expect(record.heads.map(\.status) == [404])
        #expect(record.completionCount == 1)
        #expect(sink.byteCount == 0)
        #expect(sink.writeCount == 0)
    }

    @Test func failedDownloadLeavesNothingAtTheDestination() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let downloads = try TemporaryDirectory(prefix: "peregrine-downloads")
        defer { downloads.remove() }
        let destination = downloads.path("missing.bin")
        let transport = CurlTransport()
        defer { transport.shutdown() }

        let record = try await TemporaryFileDownload.run(
            try TransferRequest(url: server.httpURL("/missing.bin")), on: transport, to: destination)

        #expect(record.error?.code == .httpStatus)
        #expect(record.error?.httpStatus == 404)
        #expect(!FileManager.default.fileExists(atPath: destination))
        #expect(!FileManager.default.fileExists(atPath: destination + TemporaryFileDownload.suffix))
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)
    }
}
