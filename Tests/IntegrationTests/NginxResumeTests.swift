import Foundation
import PeregrineCore
import PeregrineCurlTransport
import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

/// Cancelling a download part-way and resuming it with `Range` and `If-Range` against nginx.
@Suite("CurlTransport resumes downloads from nginx")
struct NginxResumeTests {
    /// The served file's size.
    static let size = 32 << 20
    /// nginx's `limit_rate`: a whole file takes about 2 s, so a cancel sent at 40 % lands well
    /// before the end of the body.
    static let rate = 16 << 20
    /// Where the first attempt is cancelled.
    static let cancelThreshold = Int64(size) * 4 / 10

    @Test func cancelledDownloadResumesFromTheBytesOnDiskToTheSameFile() async throws {
        let server = try NginxServer(.init(limitRate: Self.rate))
        defer { server.stop() }
        try await server.start()
        let servedDigest = try RandomFile.write(size: Self.size, to: server.documentPath("/file.bin"))
        let downloads = try TemporaryDirectory(prefix: "peregrine-downloads")
        defer { downloads.remove() }
        let path = downloads.path("file.bin")
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let url = server.httpURL("/file.bin")

        let first = try await downloadUntilCancelled(url, on: transport, to: path)
        let validator = try #require(first.head.resumeValidator, "nginx sends an ETag and a Last-Modified")

        let sink = try FileSink(path: path, mode: .keepExisting)
        let resumed = try await TransferMonitor.run(
            TransferRequest(url: try DownloadURL(url), range: ByteRange(start: first.bytesOnDisk), ifRange: validator),
            on: transport,
            sink: sink
        )
        try sink.close()

        let summary = try #require(resumed.summary, "the resumed download failed: \(String(describing: resumed.error))")
        #expect(resumed.heads.map(\.status) == [206])
        #expect(summary.head.status == 206)
        #expect(summary.head.contentRange?.first == first.bytesOnDisk)
        #expect(summary.head.completeLength == Int64(Self.size))
        #expect(summary.receivedBytes == Int64(Self.size) - first.bytesOnDisk)
        #expect(FileDigest.size(ofFileAt: path) == Int64(Self.size))
        #expect(try FileDigest.sha256(ofFileAt: path) == servedDigest)
    }

    @Test func resumeAfterTheFileChangedFailsWithoutWritingAndAFreshDownloadGetsTheNewFile() async throws {
        let server = try NginxServer(.init(limitRate: Self.rate))
        defer { server.stop() }
        try await server.start()
        let servedPath = server.documentPath("/file.bin")
        try RandomFile.write(size: Self.size, to: servedPath)
        let downloads = try TemporaryDirectory(prefix: "peregrine-downloads")
        defer { downloads.remove() }
        let path = downloads.path("file.bin")
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let url = server.httpURL("/file.bin")

        let first = try await downloadUntilCancelled(url, on: transport, to: path)
        let oldValidator = try #require(first.head.resumeValidator, "nginx sends an ETag and a Last-Modified")
        let partialDigest = try FileDigest.sha256(ofFileAt: path)

        // A new version: another size and a modification time an hour later, so both the ETag
        // and Last-Modified change.
        let newDigest = try RandomFile.write(
            size: Self.size + (1 << 20), to: servedPath, modificationDate: Date().addingTimeInterval(3600))

        let resumeSink = CountingSink(try FileSink(path: path, mode: .keepExisting))
        let refused = try await TransferMonitor.run(
            TransferRequest(
                url: try DownloadURL(url), range: ByteRange(start: first.bytesOnDisk), ifRange: oldValidator),
            on: transport,
            sink: resumeSink
        )

        let error = try #require(refused.error, "a resume onto a changed file must not succeed")
        #expect(error.code == .rangeNotHonoured)
        // TransportError documents httpStatus for rangeNotHonoured: nginx answered the whole new file.
        #expect(error.httpStatus == 200)
        #expect(refused.heads.allSatisfy { $0.status == 200 })
        #expect(resumeSink.byteCount == 0)
        #expect(resumeSink.writeCount == 0)
        #expect(FileDigest.size(ofFileAt: path) == first.bytesOnDisk)
        #expect(try FileDigest.sha256(ofFileAt: path) == partialDigest)

        let freshSink = try FileSink(path: path, mode: .truncate)
        let fresh = try await TransferMonitor.run(try TransferRequest(url: url), on: transport, sink: freshSink)
        try freshSink.close()

        let summary = try #require(fresh.summary, "the fresh download failed: \(String(describing: fresh.error))")
        #expect(summary.head.status == 200)
        #expect(summary.head.resumeValidator != oldValidator)
        #expect(FileDigest.size(ofFileAt: path) == Int64(Self.size + (1 << 20)))
        #expect(try FileDigest.sha256(ofFileAt: path) == newDigest)
    }

    /// What the cancelled first attempt left.
    struct CancelledAttempt {
        /// The head the server sent.
        var head: ResponseHead
        /// The file's size after the sink was closed: the bytes to resume after.
        var bytesOnDisk: Int64
    }

    /// Downloads `url` into `path` and cancels from the event handler on the first progress
    /// event past ``cancelThreshold``; expects the transfer to end cancelled part-way.
    private func downloadUntilCancelled(
        _ url: String,
        on transport: CurlTransport,
        to path: String
    ) async throws -> CancelledAttempt {
        let sink = try FileSink(path: path, mode: .truncate)
        let record = try await TransferMonitor.run(try TransferRequest(url: url), on: transport, sink: sink) {
            event, monitor in
            if case .progress(let progress) = event, progress.receivedBytes >= Self.cancelThreshold {
                monitor.cancel()
            }
        }
        try sink.close()

        try #require(record.error?.code == .cancelled, "the first attempt should end cancelled: \(record.result)")
        #expect(record.completionCount == 1)
        let head = try #require(record.heads.first, "the first attempt reported no head")
        #expect(head.status == 200)
        let bytesOnDisk = try #require(FileDigest.size(ofFileAt: path))
        #expect(bytesOnDisk >= Self.cancelThreshold)
        try #require(bytesOnDisk < Int64(Self.size), "the cancel came after the whole body")
        return CancelledAttempt(head: head, bytesOnDisk: bytesOnDisk)
    }
}
