import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `close()` flushes and closes; the sink refuses writes afterwards and is safe to release.
@Suite("FileSink close")
struct FileSinkCloseTests {
    @Test(arguments: FileSinkConfiguration.all)
    func closeWritesOutBufferedBytes(_ configuration: FileSinkConfiguration) throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("buffered.bin")
        let sink = try FileSink(path: path, options: configuration.options)
        try sink.write([1, 2, 3], at: 0)
        try sink.write([4, 5], at: 3)
        try sink.close()
        try expectFile(path, holds: [1, 2, 3, 4, 5])
    }

    @Test func closeTwiceIsHarmless() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("twice.bin")
        let sink = try FileSink(path: path)
        try sink.write([1], at: 0)
        try sink.close()
        try sink.close()
        try expectFile(path, holds: [1])
    }

    /// A write after `close()`, whatever its size, fails with `EBADF` (as `close()` documents)
    /// and leaves the file as it was.
    @Test(arguments: [
        (FileSinkConfiguration.defaults, 1), (.defaults, 5000), (.defaults, 3 << 20),
        (.smallSynchronous, 1), (.smallSynchronous, 20_000),
        (.smallBackground, 1), (.smallBackground, 20_000),
    ])
    func writeAfterCloseFailsWithEBADF(_ configuration: FileSinkConfiguration, size: Int) throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("closed.bin")
        let sink = try FileSink(path: path, options: configuration.options)
        try sink.write([1, 2, 3], at: 0)
        try sink.close()

        let error = #expect(throws: SinkWriteError.self) {
            try sink.write([UInt8](repeating: 9, count: size), at: 3)
        }
        #expect(error?.errno == EBADF)
        try expectFile(path, holds: [1, 2, 3])
    }

    @Test func closeClosesEveryDescriptorOfTheFile() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("descriptors.bin")
        var generator = SeededRandom(seed: 0xC105E)
        let sink = try FileSink(path: path, options: FileSinkConfiguration.smallBackground.options)
        try sink.write(generator.bytes(1 << 20), at: 0)
        try sink.flush()
        #expect(!OpenDescriptors.flags(ofDescriptorsOn: path).isEmpty)
        try sink.close()
        #expect(OpenDescriptors.flags(ofDescriptorsOn: path).isEmpty)
    }

    /// Dropping the last reference while a background write is still running must not crash:
    /// the pending job holds the sink, so its `deinit` runs on the sink's own queue, where
    /// `queue.sync {}` traps ("dispatch_sync called on queue already owned by current thread").
    @Test func releasingASinkWithABackgroundWriteInFlightDoesNotCrash() async {
        await #expect(processExitsWith: .success) {
            let directory = try ScratchDirectory()
            defer { directory.remove() }
            weak var released: FileSink?
            do {
                let options = FileSink.Options(bufferCapacity: 8 << 20, backgroundThreshold: 0)
                let sink = try FileSink(path: directory.file("released.bin"), options: options)
                released = sink
                // Two full buffers: the second is still being written when `write` returns.
                try sink.write([UInt8](repeating: 0x5A, count: 16 << 20), at: 0)
            }
            // Wait (bounded) for the background job to finish and release the sink.
            let deadline = ContinuousClock.now + .seconds(60)
            while released != nil, ContinuousClock.now < deadline { sched_yield() }
            if released != nil { exit(2) }
        }
    }

    /// `close()` after a background write failed must still wait for the write already in flight
    /// before it closes the descriptors: otherwise the bytes of a write that `write` accepted are
    /// lost (the background job meets `EBADF`), or, when the descriptor numbers have been reused
    /// by then, written into an unrelated file.
    ///
    /// A file size limit (`RLIMIT_FSIZE`, set in the child process only) makes one background
    /// batch fail with `EFBIG` while the next one is being written.
    @Test func closeAfterABackgroundFailureWaitsForTheWriteInFlight() async {
        await #expect(processExitsWith: .success) {
            let mebibyte = 1 << 20
            let limit = 64 * mebibyte
            var fileLimit = rlimit()
            guard getrlimit(Int32(RLIMIT_FSIZE.rawValue), &fileLimit) == 0 else { exit(3) }
            fileLimit.rlim_cur = rlim_t(limit)
            guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &fileLimit) == 0 else { exit(3) }
            signal(SIGXFSZ, SIG_IGN)
            let directory = try ScratchDirectory()
            defer { directory.remove() }
            var generator = SeededRandom(seed: 0xC1_05E)
            let warmUp = generator.bytes(32 * mebibyte)
            let failing = generator.bytes(16 * mebibyte)
            let accepted = generator.bytes(12 * mebibyte + 5)
            let options = FileSink.Options(bufferCapacity: 16 * mebibyte, backgroundThreshold: 0)
            // Every sink stays referenced until `exit`: releasing one with a write in flight would
            // trap (see the test above) and hide this test's outcome.
            var kept: [FileSink] = []
            var checked = 0
            for attempt in 0..<8 where checked < 3 {
                let path = directory.file("limited-\(attempt).bin")
                let sink = try FileSink(path: path, options: options)
                // Fill both buffers once, so that no page fault slows the steps below.
                try sink.write(warmUp, at: 0)
                try sink.flush()
                // A batch that crosses the size limit: a long direct write, then EFBIG.
                try sink.write(failing, at: limit - 16 * mebibyte + 4096)
                // Buffered while that batch is written; the jump below sends it to the background
                // and, waiting for the buffer, lets the failure be recorded.
                do {
                    try sink.write(accepted, at: 32 * mebibyte)
                    try sink.write([1, 2, 3], at: 46 * mebibyte)
                } catch {
                    kept.append(sink)
                    continue  // The failing batch ended before one of these writes: try again.
                }
                kept.append(sink)
                #expect(throws: SinkWriteError.self) { try sink.close() }
                let file = try FileBytes.read(path)
                guard file.count >= 32 * mebibyte + accepted.count else { exit(1) }
                let written = Array(file[(32 * mebibyte)..<(32 * mebibyte + accepted.count)])
                if FileBytes.firstDifference(written, accepted) != nil { exit(1) }
                checked += 1
            }
            _ = kept
            exit(checked > 0 ? 0 : 4)
        }
    }
}
