import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

/// Writes that jump backwards and forwards must land where they were aimed, the latest write
/// winning where two overlap, and gaps reading as zeros.
@Suite("FileSink non-contiguous writes")
struct FileSinkNonContiguousWriteTests {
    /// Configurations whose batches are either all written on the caller's thread or all in the
    /// background; a backward jump below the threshold has its own test
    /// (``laterWriteBelowTheThresholdWinsOverAnEarlierBackgroundWrite()``).
    static let configurations: [FileSinkConfiguration] = [
        .smallSynchronous, .smallBackground, .oddBackground, .bufferedBackground, .largeBackground,
        FileSinkConfiguration(
            name: "default buffers, background from 0",
            options: .init(backgroundThreshold: 0), salt: 8),
        FileSinkConfiguration(
            name: "default options below the threshold",
            options: .init(), salt: 9),
    ]

    @Test(arguments: configurations, [1, 2, 3])
    func fileSinkPlacesWritesThatJumpBackwardsAndForwards(_ configuration: FileSinkConfiguration, seed: UInt64)
        throws
    {
        var generator = SeededRandom(seed: seed &* 1000 &+ configuration.salt)
        // Below 8 MiB, so that the default options never go to the background.
        let limit = 6 << 20
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("scattered.bin")
        var expected = ExpectedFile()

        let sink = try FileSink(path: path, options: configuration.options)
        var cursor = 0
        for _ in 0..<300 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: cursor = Int.random(in: 0...max(0, expected.bytes.count), using: &generator)  // anywhere before
            case 1: cursor += Int.random(in: 1...300_000, using: &generator)  // leave a gap
            case 2: cursor = max(0, cursor - Int.random(in: 1...5000, using: &generator))  // a little back
            default: break  // contiguous
            }
            cursor = min(cursor, limit - 1)
            let count = min(generator.chunkSize(upTo: 1 << 20), limit - cursor)
            let chunk = generator.bytes(count)
            try sink.write(chunk, at: cursor)
            expected.write(chunk, chunk.indices, at: cursor)
            cursor += count
        }
        try sink.close()

        try expectFile(path, holds: expected.bytes)
    }

    @Test(arguments: FileSinkConfiguration.all)
    func fileSinkFillsAGapWithZeros(_ configuration: FileSinkConfiguration) throws {
        var generator = SeededRandom(seed: 0x6A9 &+ configuration.salt)
        let head = generator.bytes(5000)
        let tail = generator.bytes(30_000)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("gap.bin")

        let sink = try FileSink(path: path, options: configuration.options)
        try sink.write(head, at: 0)
        try sink.write(tail, at: 100_003)
        try sink.close()

        var expected = ExpectedFile()
        expected.write(head, head.indices, at: 0)
        expected.write(tail, tail.indices, at: 100_003)
        try expectFile(path, holds: expected.bytes)
    }

    @Test(arguments: FileSinkConfiguration.all)
    func fileSinkOverwritesEarlierBytesOnABackwardJump(_ configuration: FileSinkConfiguration) throws {
        var generator = SeededRandom(seed: 0xBAC &+ configuration.salt)
        let first = generator.bytes(70_000)
        let patch = generator.bytes(3000)
        let rest = generator.bytes(10_000)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("patched.bin")

        let sink = try FileSink(path: path, options: configuration.options)
        try sink.write(first, at: 0)
        try sink.write(patch, at: 65_000)  // overlaps the end of the buffered bytes
        try sink.write(rest, at: 70_000)  // back to where the first write ended
        try sink.close()

        var expected = ExpectedFile()
        expected.write(first, first.indices, at: 0)
        expected.write(patch, patch.indices, at: 65_000)
        expected.write(rest, rest.indices, at: 70_000)
        try expectFile(path, holds: expected.bytes)
    }

    /// A full buffer that crosses the threshold goes to the background queue; a later write
    /// that jumps back below the threshold is written at once on the caller's thread. The
    /// later write must still win: the background write of the older bytes must not land after it.
    @Test func laterWriteBelowTheThresholdWinsOverAnEarlierBackgroundWrite() throws {
        let mebibyte = 1 << 20
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        // Several rounds: the outcome depends on which thread reaches the file first.
        for round in 0..<8 {
            let path = directory.file("race-\(round).bin")
            var generator = SeededRandom(seed: 0x5ACE &+ UInt64(round))
            let older = generator.bytes(6 * mebibyte + 100)
            let newer = generator.bytes(40)
            let options = FileSink.Options(
                bufferCapacity: 16 * mebibyte, backgroundThreshold: Int64(6 * mebibyte + 60))

            let sink = try FileSink(path: path, options: options)
            try sink.write(older, at: 0)
            // Not contiguous: the 6 MiB + 100 buffered bytes go to the background (their end is past
            // the threshold) and these 40 bytes, ending below the threshold, are written at once.
            try sink.write(newer, at: 6 * mebibyte + 10)
            try sink.close()

            var expected = ExpectedFile()
            expected.write(older, older.indices, at: 0)
            expected.write(newer, newer.indices, at: 6 * mebibyte + 10)
            try expectFile(path, holds: expected.bytes, "round \(round)")
        }
    }
}
