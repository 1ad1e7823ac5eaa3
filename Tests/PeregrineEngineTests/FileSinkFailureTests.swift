import PeregrineEngine
import PeregrineTransport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Failures surface as ``SinkWriteError`` with the errno of the failed call.
@Suite("FileSink failures")
struct FileSinkFailureTests {
    /// Writes `total` bytes in `chunk`-sized pieces, then flushes; the first error thrown by a
    /// write or by the flush, or nil when everything succeeded.
    static func firstError(writing total: Int, inChunksOf chunk: Int, to sink: FileSink) -> (any Error)? {
        let bytes = [UInt8](repeating: 0xEE, count: chunk)
        do {
            var done = 0
            while done < total {
                try sink.write(bytes, 0..<min(chunk, total - done), at: done)
                done += chunk
            }
            try sink.flush()
            return nil
        } catch {
            return error
        }
    }

    static let devFullCases: [(FileSinkConfiguration, Int, Int)] = [
        (.defaults, 100, 100),
        (.defaults, 5 << 20, 1 << 20),
        (.defaults, 12 << 20, 3 << 20),
        (.smallSynchronous, 100_000, 1000),
        (.smallBackground, 100, 100),
        (.smallBackground, 1 << 20, 65_536),
        (.smallCrossing, 100_000, 3000),
        (.bufferedBackground, 1 << 20, 10_000),
        (.largeBackground, 4 << 20, 1 << 20),
    ]

    /// `/dev/full` answers every write with `ENOSPC`: the sink must report it, from `write` or at
    /// the latest from `flush`, as errno 28.
    @Test(arguments: devFullCases)
    func writingToDevFullThrowsENOSPC(_ configuration: FileSinkConfiguration, total: Int, chunk: Int) throws {
        let error = try withDrainedFileSink(path: "/dev/full", options: configuration.options) { sink in
            Self.firstError(writing: total, inChunksOf: chunk, to: sink)
        }
        let sinkError = try #require(error as? SinkWriteError, "got \(String(describing: error))")
        #expect(sinkError.errno == 28)
        #expect(sinkError.message.contains("/dev/full"))
        #expect(sinkError.message.contains("disk is full"))
    }

    @Test func synchronizeOnDevFullThrowsENOSPC() throws {
        let sink = try FileSink(path: "/dev/full")
        try sink.write([1, 2, 3], at: 0)
        let error = #expect(throws: SinkWriteError.self) { try sink.synchronize() }
        #expect(error?.errno == 28)
    }

    @Test func closeOnDevFullThrowsENOSPC() throws {
        let sink = try FileSink(path: "/dev/full")
        try sink.write([1, 2, 3], at: 0)
        let error = #expect(throws: SinkWriteError.self) { try sink.close() }
        #expect(error?.errno == 28)
    }

    @Test func backgroundFailureIsReportedAgainByLaterCalls() throws {
        try withDrainedFileSink(path: "/dev/full", options: FileSinkConfiguration.smallBackground.options) { sink in
            let first = Self.firstError(writing: 1 << 20, inChunksOf: 8192, to: sink)
            #expect((first as? SinkWriteError)?.errno == 28)
            // The failure stays: the transfer cannot go on as if the bytes had been stored.
            let again = #expect(throws: SinkWriteError.self) { try sink.flush() }
            #expect(again?.errno == 28)
            let onWrite = #expect(throws: SinkWriteError.self) {
                try sink.write([UInt8](repeating: 1, count: 8192), at: 1 << 20)
            }
            #expect(onWrite?.errno == 28)
        }
    }

    @Test func openingAPathInAMissingDirectoryThrowsENOENT() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("missing/download.bin")
        let error = #expect(throws: SinkWriteError.self) { try FileSink(path: path) }
        #expect(error?.errno == 2)
        #expect(error?.message.contains(path) == true)
    }

    @Test func openingAPathInAMissingDirectoryThrowsENOENTWhenKeepingExisting() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let error = #expect(throws: SinkWriteError.self) {
            try FileSink(path: directory.file("missing/download.bin"), mode: .keepExisting)
        }
        #expect(error?.errno == 2)
    }

    @Test func openingADirectoryThrowsEISDIR() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let error = #expect(throws: SinkWriteError.self) { try FileSink(path: directory.path) }
        #expect(error?.errno == EISDIR)
    }

    /// `pwrite` refuses a negative offset with `EINVAL`; the sink must not turn it into a copy
    /// to before the start of its buffer.
    @Test func negativeOffsetIsRefusedWithEINVAL() async {
        await #expect(processExitsWith: .success) {
            let directory = try ScratchDirectory()
            defer { directory.remove() }
            let sink = try FileSink(path: directory.file("negative.bin"))
            do {
                try sink.write([1, 2, 3], at: -1)
            } catch let error as SinkWriteError where error.errno == EINVAL {
                return
            }
            exit(1)
        }
    }
}
