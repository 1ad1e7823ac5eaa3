import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

/// `.keepExisting` resumes into a file; `.truncate` starts over.
@Suite("FileSink open modes")
struct FileSinkModeTests {
    /// An existing file, and where and how much a resumed transfer writes into it.
    struct Resume: Sendable, CustomTestStringConvertible {
        var configuration: FileSinkConfiguration
        var existingLength: Int
        var offset: Int
        var length: Int
        var testDescription: String {
            "\(configuration.name): \(length) bytes at \(offset) into \(existingLength) existing"
        }
    }

    static let resumes: [Resume] = [
        // The resume ends inside the existing bytes: the file keeps its tail.
        Resume(configuration: .smallBackground, existingLength: 3 << 20, offset: 12345, length: 1 << 20),
        Resume(configuration: .smallCrossing, existingLength: 3 << 20, offset: 12345, length: 1 << 20),
        Resume(configuration: .smallSynchronous, existingLength: 100_000, offset: 12345, length: 50_000),
        Resume(configuration: .largeBackground, existingLength: 3 << 20, offset: 12345, length: (2 << 20) + 1),
        Resume(configuration: .defaults, existingLength: 3 << 20, offset: 12345, length: 1 << 20),
        // The resume runs past the end of the existing bytes.
        Resume(configuration: .smallBackground, existingLength: 20_000, offset: 12345, length: (2 << 20) + 3),
        Resume(configuration: .smallCrossing, existingLength: 20_000, offset: 12345, length: 500_000),
        Resume(configuration: .oddBackground, existingLength: 12345, offset: 12345, length: 777_777),
        Resume(configuration: .bufferedBackground, existingLength: 20_000, offset: 12345, length: 300_000),
        Resume(configuration: .largeBackground, existingLength: 12345, offset: 12345, length: (5 << 20) + 11),
        Resume(configuration: .defaults, existingLength: 12345, offset: 12345, length: (10 << 20) + 999),
        // Aligned and barely unaligned starts.
        Resume(configuration: .smallBackground, existingLength: 8192, offset: 4096, length: 100_000),
        Resume(configuration: .smallBackground, existingLength: 8192, offset: 4095, length: 100_000),
        Resume(configuration: .smallBackground, existingLength: 8192, offset: 4097, length: 100_000),
    ]

    @Test(arguments: resumes)
    func fileSinkResumesAtAnUnalignedOffsetOverExistingBytes(_ resume: Resume) throws {
        var generator = SeededRandom(seed: UInt64(resume.length) &+ resume.configuration.salt)
        let existing = generator.bytes(resume.existingLength)
        let content = generator.bytes(resume.length)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("partial.bin")
        try FileBytes.write(existing, to: path)

        let sink = try FileSink(path: path, mode: .keepExisting, options: resume.configuration.options)
        try sink.writeInRandomChunks(content, at: resume.offset, using: &generator)
        try sink.close()

        var expected = ExpectedFile(existing: existing)
        expected.write(content, content.indices, at: resume.offset)
        try expectFile(path, holds: expected.bytes)
    }

    @Test func keepExistingWithoutWritesLeavesTheFileAlone() throws {
        var generator = SeededRandom(seed: 11)
        let existing = generator.bytes(50_000)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("kept.bin")
        try FileBytes.write(existing, to: path)

        let sink = try FileSink(path: path, mode: .keepExisting)
        try sink.close()

        try expectFile(path, holds: existing)
    }

    @Test func keepExistingCreatesAMissingFile() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("new.bin")
        let sink = try FileSink(path: path, mode: .keepExisting)
        try sink.write([9, 8, 7], at: 0)
        try sink.close()
        try expectFile(path, holds: [9, 8, 7])
    }

    @Test func truncateCutsAnExistingFile() throws {
        var generator = SeededRandom(seed: 12)
        let existing = generator.bytes(50_000)
        let content = generator.bytes(100)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("cut.bin")
        try FileBytes.write(existing, to: path)

        let sink = try FileSink(path: path, mode: .truncate)
        try sink.write(content, at: 0)
        try sink.close()

        try expectFile(path, holds: content)
    }

    @Test func truncateIsTheDefaultMode() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("default.bin")
        try FileBytes.write([1, 2, 3, 4, 5], to: path)
        let sink = try FileSink(path: path)
        try sink.close()
        try expectFile(path, holds: [])
    }
}
