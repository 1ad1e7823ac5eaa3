import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

/// Files written front to back in random chunks must come out byte for byte.
@Suite("FileSink sequential writes")
struct FileSinkSequentialWriteTests {
    /// Sizes around the 4096-byte block, the 8 KiB buffers, the 20000-byte threshold, and the
    /// default 2 MiB buffers and 8 MiB threshold.
    static let sizes = [
        0, 1, 4095, 4096, 4097, 8191, 8192, 8193, 12_288, 20_000, 65_537, (1 << 20) + 7, (9 << 20) + 4321,
    ]

    @Test(arguments: FileSinkConfiguration.all, sizes)
    func fileSinkWritesRandomChunksByteForByte(_ configuration: FileSinkConfiguration, size: Int) throws {
        var generator = SeededRandom(seed: UInt64(size) &* 31 &+ configuration.salt)
        let content = generator.bytes(size)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("download.bin")

        let sink = try FileSink(path: path, options: configuration.options)
        try sink.writeInRandomChunks(content, at: 0, using: &generator)
        try sink.close()

        try expectFile(path, holds: content)
    }

    /// 40 MiB: many background batches, and (with the defaults) the switch at 8 MiB.
    @Test(arguments: [FileSinkConfiguration.defaults, .smallBackground, .largeBackground, .smallCrossing])
    func fileSinkWritesALargeFileByteForByte(_ configuration: FileSinkConfiguration) throws {
        var generator = SeededRandom(seed: 0x4040 &+ configuration.salt)
        let content = generator.bytes((40 << 20) + 123)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("large.bin")

        let sink = try FileSink(path: path, options: configuration.options)
        try sink.writeInRandomChunks(content, at: 0, using: &generator)
        try sink.close()

        try expectFile(path, holds: content)
    }

    @Test(arguments: [
        FileSinkConfiguration.smallSynchronous, .smallBackground, .smallCrossing, .oddBackground, .bufferedBackground,
    ])
    func fileSinkWritesOneByteAtATime(_ configuration: FileSinkConfiguration) throws {
        var generator = SeededRandom(seed: 0xB17E &+ configuration.salt)
        let content = generator.bytes(50_001)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("bytes.bin")

        let sink = try FileSink(path: path, options: configuration.options)
        for index in content.indices { try sink.write(content, index..<(index + 1), at: index) }
        try sink.close()

        try expectFile(path, holds: content)
    }

    @Test(arguments: FileSinkConfiguration.all)
    func fileSinkWritesChunksOfExactlyOneBuffer(_ configuration: FileSinkConfiguration) throws {
        let capacity = (configuration.options.bufferCapacity + 4095) / 4096 * 4096
        var generator = SeededRandom(seed: 0xCAFE &+ configuration.salt)
        let content = generator.bytes(capacity * 5 + 1)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("buffers.bin")

        let sink = try FileSink(path: path, options: configuration.options)
        var done = 0
        while done < content.count {
            let count = min(capacity, content.count - done)
            try sink.write(content, done..<(done + count), at: done)
            done += count
        }
        try sink.close()

        try expectFile(path, holds: content)
    }

    @Test func fileSinkIgnoresAnEmptyWrite() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("empty.bin")
        let sink = try FileSink(path: path)
        try sink.write([], at: 0)
        try sink.write([1, 2, 3], at: 0)
        try sink.write([], at: 1000)
        try sink.close()
        try expectFile(path, holds: [1, 2, 3])
    }

    @Test func fileSinkCreatesAnEmptyFileWhenNothingIsWritten() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("nothing.bin")
        let sink = try FileSink(path: path)
        try sink.close()
        try expectFile(path, holds: [])
    }
}
