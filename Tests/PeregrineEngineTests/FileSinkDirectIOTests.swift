import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where direct I/O is used, and that the bytes are right with it, without it, and where the file
/// system decides.
@Suite("FileSink direct I/O")
struct FileSinkDirectIOTests {
    @Test func backgroundWritesUseADirectDescriptorWhereTheFileSystemAllowsIt() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("direct.bin")
        var generator = SeededRandom(seed: 0xD1)
        let content = generator.bytes((1 << 20) + 5)
        let sink = try FileSink(path: path, options: FileSinkConfiguration.smallBackground.options)
        try sink.write(content, at: 0)
        try sink.flush()
        // Where the file system refuses O_DIRECT, the sink stays buffered.
        #expect(
            OpenDescriptors.hasDirectDescriptor(on: path) == OpenDescriptors.directIOIsSupported(in: directory.path))
        try sink.close()
        try expectFile(path, holds: content)
    }

    @Test func writesBelowTheThresholdOpenNoDirectDescriptor() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("small.bin")
        var generator = SeededRandom(seed: 0xD2)
        let content = generator.bytes(5 << 20)
        let sink = try FileSink(path: path)
        try sink.writeInRandomChunks(content, at: 0, using: &generator)
        try sink.flush()
        #expect(!OpenDescriptors.flags(ofDescriptorsOn: path).isEmpty)
        #expect(!OpenDescriptors.hasDirectDescriptor(on: path))
        try sink.close()
        try expectFile(path, holds: content)
    }

    @Test(arguments: [
        FileSinkConfiguration.bufferedBackground,
        FileSinkConfiguration(
            name: "default options without direct I/O", options: .init(usesDirectIO: false), salt: 10),
    ])
    func withoutDirectIONoDirectDescriptorIsOpenedAndTheBytesAreRight(_ configuration: FileSinkConfiguration)
        throws
    {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("buffered.bin")
        var generator = SeededRandom(seed: 0xD3 &+ configuration.salt)
        let content = generator.bytes((11 << 20) + 99)
        let sink = try FileSink(path: path, options: configuration.options)
        try sink.writeInRandomChunks(content, at: 0, using: &generator)
        try sink.flush()
        #expect(!OpenDescriptors.hasDirectDescriptor(on: path))
        try sink.close()
        try expectFile(path, holds: content)
    }

    /// `/dev/shm` is tmpfs, which refuses `O_DIRECT` on older kernels (accepted since Linux 6.6):
    /// either way the bytes must be right.
    @Test(
        .enabled(if: access("/dev/shm", W_OK) == 0, "needs a writable /dev/shm"),
        arguments: [FileSinkConfiguration.smallBackground, .smallCrossing, .largeBackground, .defaults]
    )
    func fileSinkWritesCorrectlyOnTmpfs(_ configuration: FileSinkConfiguration) throws {
        let directory = try ScratchDirectory(under: "/dev/shm")
        defer { directory.remove() }
        let path = directory.file("tmpfs.bin")
        var generator = SeededRandom(seed: 0xD4 &+ configuration.salt)
        let existing = generator.bytes(20_000)
        let content = generator.bytes((9 << 20) + 4097)
        try FileBytes.write(existing, to: path)

        let sink = try FileSink(path: path, mode: .keepExisting, options: configuration.options)
        try sink.writeInRandomChunks(content, at: 12345, using: &generator)
        try sink.close()

        var expected = ExpectedFile(existing: existing)
        expected.write(content, content.indices, at: 12345)
        try expectFile(path, holds: expected.bytes)
    }

    /// The sink writes the file it opened. Its direct descriptor is opened later, by path, at the
    /// first background batch: if the path names another file by then (the partial file was
    /// moved and a new one created in its place), the aligned middles go to that other file.
    @Test func backgroundWritesGoToTheFileThatWasOpened() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("download.bin")
        let moved = directory.file("moved.bin")
        var generator = SeededRandom(seed: 0xD5)
        let content = generator.bytes((1 << 20) + 123)

        let sink = try FileSink(path: path, options: FileSinkConfiguration.smallBackground.options)
        #expect(rename(path, moved) == 0)
        try FileBytes.write([], to: path)
        try sink.writeInRandomChunks(content, at: 0, using: &generator)
        try sink.close()

        try expectFile(moved, holds: content, "the opened file")
        try expectFile(path, holds: [], "the file that took its name")
    }
}
