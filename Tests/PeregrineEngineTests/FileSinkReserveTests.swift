import Foundation
import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

/// `FileSink.reserve(upTo:)`: the blocks are reserved without changing the file's size, the bytes
/// written afterwards are the file, and a reservation larger than the file system fails with
/// `ENOSPC` (a tmpfs mounted by the test, which needs root, as CI has).
@Suite struct FileSinkReserveTests {
    @Test func reservingKeepsTheSizeAndAllocatesTheBlocks() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-reserve")
        defer { scratch.remove() }
        let path = scratch.path("f.bin")
        let sink = try FileSink(path: path, mode: .truncate)
        try sink.reserve(upTo: 8 << 20)
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_size == 0)
        // 512-byte units: at least the 8 MiB asked for (a file system without fallocate would
        // leave it at 0, and this test would say so).
        #expect(Int64(status.st_blocks) * 512 >= 8 << 20)

        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.withUnsafeBytes { try sink.write($0, at: 0) }
        try sink.close()
        #expect(FileManager.default.contents(atPath: path) == bytes)
    }

    @Test func reservingMoreThanTheFileSystemHoldsFailsWithNoSpace() async throws {
        guard getuid() == 0 else {
            print("skipped: mounting a tmpfs needs root")
            return
        }
        let scratch = try TemporaryDirectory(prefix: "peregrine-reserve")
        defer { scratch.remove() }
        let mount = scratch.path("tmpfs")
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let mounted = try await ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mount])
        try #require(mounted.status == 0)
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [mount]
            try? umount.run()
            umount.waitUntilExit()
        }
        let sink = try FileSink(path: mount + "/f.bin", mode: .truncate)
        defer { try? sink.close() }
        #expect(throws: SinkWriteError.self) { try sink.reserve(upTo: 4 << 20) }
        do {
            try sink.reserve(upTo: 4 << 20)
        } catch {
            #expect(error.errno == ENOSPC)
            #expect(error.message.contains("fallocate"))
        }
        // What fits is reserved.
        try sink.reserve(upTo: 256 << 10)
    }
}
