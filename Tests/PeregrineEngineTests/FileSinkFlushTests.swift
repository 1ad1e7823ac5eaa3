import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

/// `flush()` puts every byte written so far into the file, and the sink keeps working after it.
@Suite("FileSink flush")
struct FileSinkFlushTests {
    @Test(arguments: FileSinkConfiguration.all)
    func flushMakesEveryWrittenByteVisibleAndWritingGoesOn(_ configuration: FileSinkConfiguration) throws {
        var generator = SeededRandom(seed: 0xF1 &+ configuration.salt)
        let content = generator.bytes((9 << 20) + 12_345)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("flushed.bin")

        let sink = try FileSink(path: path, options: configuration.options)
        // Flush at unaligned points, at a block boundary, and twice in a row.
        var written = 0
        for stop in [1, 5000, 8192, 8192, 20_001, 1 << 20, (3 << 20) + 77, (8 << 20) + 1, content.count] {
            let part = Array(content[written..<stop])
            try sink.writeInRandomChunks(part, at: written, maxChunk: 1 << 20, using: &generator)
            written = stop
            try sink.flush()
            try expectFile(path, holds: Array(content[0..<written]), "after flushing at \(written)")
        }
        try sink.close()

        try expectFile(path, holds: content)
    }

    @Test func flushWithNothingBufferedDoesNothing() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("idle.bin")
        let sink = try FileSink(path: path)
        try sink.flush()
        try sink.flush()
        try expectFile(path, holds: [])
        try sink.close()
    }

    @Test(arguments: [FileSinkConfiguration.smallBackground, .defaults])
    func flushBetweenJumpsKeepsEveryWrite(_ configuration: FileSinkConfiguration) throws {
        var generator = SeededRandom(seed: 0xF2 &+ configuration.salt)
        let a = generator.bytes(30_000)
        let b = generator.bytes(30_000)
        let c = generator.bytes(30_000)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("jumps.bin")

        let sink = try FileSink(path: path, options: configuration.options)
        try sink.write(a, at: 50_000)
        try sink.flush()
        try sink.write(b, at: 0)
        try sink.flush()
        try sink.write(c, at: 12_345)
        try sink.close()

        var expected = ExpectedFile()
        expected.write(a, a.indices, at: 50_000)
        expected.write(b, b.indices, at: 0)
        expected.write(c, c.indices, at: 12_345)
        try expectFile(path, holds: expected.bytes)
    }
}
