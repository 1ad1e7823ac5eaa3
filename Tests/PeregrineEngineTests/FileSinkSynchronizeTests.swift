import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

/// `synchronize()` flushes, `fsync`s, and answers the end of the highest write.
@Suite("FileSink synchronize")
struct FileSinkSynchronizeTests {
    @Test func synchronizeOfAFreshSinkReturnsZero() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sink = try FileSink(path: directory.file("fresh.bin"))
        #expect(try sink.synchronize() == 0)
        try sink.close()
    }

    @Test(arguments: FileSinkConfiguration.all)
    func synchronizeReturnsTheEndOfContiguousWritesAndPutsThemInTheFile(_ configuration: FileSinkConfiguration)
        throws
    {
        var generator = SeededRandom(seed: 0x5C &+ configuration.salt)
        let content = generator.bytes((2 << 20) + 4321)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("synced.bin")

        let sink = try FileSink(path: path, options: configuration.options)
        try sink.writeInRandomChunks(Array(content[0..<777]), at: 0, using: &generator)
        #expect(try sink.synchronize() == 777)
        try expectFile(path, holds: Array(content[0..<777]))
        try sink.writeInRandomChunks(Array(content[777...]), at: 777, using: &generator)
        #expect(try sink.synchronize() == Int64(content.count))
        try expectFile(path, holds: content)
        try sink.close()
    }

    @Test(arguments: [FileSinkConfiguration.smallSynchronous, .smallBackground, .defaults])
    func synchronizeReturnsTheHighestEndAfterAJumpBack(_ configuration: FileSinkConfiguration) throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sink = try FileSink(path: directory.file("jump.bin"), options: configuration.options)
        try sink.write([UInt8](repeating: 1, count: 1000), at: 0)
        try sink.write([UInt8](repeating: 2, count: 1000), at: 50_000)
        try sink.write([UInt8](repeating: 3, count: 10), at: 100)
        #expect(try sink.synchronize() == 51_000)
        try sink.write([UInt8](repeating: 4, count: 10), at: 200)
        #expect(try sink.synchronize() == 51_000)
        try sink.close()
    }

    @Test func synchronizeCountsWrittenBytesNotTheExistingFile() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("existing.bin")
        try FileBytes.write([UInt8](repeating: 7, count: 50_000), to: path)
        let sink = try FileSink(path: path, mode: .keepExisting)
        try sink.write([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], at: 0)
        #expect(try sink.synchronize() == 10)
        try sink.close()
    }

    @Test func synchronizeAfterCloseThrowsEBADF() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sink = try FileSink(path: directory.file("closed.bin"))
        try sink.close()
        let error = #expect(throws: SinkWriteError.self) { try sink.synchronize() }
        #expect(error?.errno == 9)  // EBADF
    }
}
