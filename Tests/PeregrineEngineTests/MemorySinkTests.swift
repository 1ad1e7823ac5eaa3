import PeregrineTransport
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

@Suite("MemorySink")
struct MemorySinkTests {
    @Test func memorySinkKeepsBytesInOrder() throws {
        let sink = MemorySink()
        try sink.write([1, 2, 3], at: 0)
        try sink.write([4, 5], at: 3)
        try sink.flush()
        #expect(sink.bytes == [1, 2, 3, 4, 5])
    }

    @Test func memorySinkFillsAGapWithZeros() throws {
        let sink = MemorySink()
        try sink.write([9], at: 4)
        #expect(sink.bytes == [0, 0, 0, 0, 9])
    }

    @Test func memorySinkOverwritesOnABackwardWrite() throws {
        let sink = MemorySink()
        try sink.write([1, 2, 3, 4, 5], at: 0)
        try sink.write([8, 9], at: 1)
        #expect(sink.bytes == [1, 8, 9, 4, 5])
    }

    @Test func memorySinkMatchesRandomWrites() throws {
        var generator = SeededRandom(seed: 0x3E3)
        let sink = MemorySink()
        var expected = ExpectedFile()
        for _ in 0..<200 {
            let offset = Int.random(in: 0..<100_000, using: &generator)
            let chunk = generator.bytes(Int.random(in: 1..<5000, using: &generator))
            try sink.write(chunk, at: offset)
            expected.write(chunk, chunk.indices, at: offset)
        }
        #expect(FileBytes.firstDifference(sink.bytes, expected.bytes) == nil)
    }

    @Test func memorySinkAcceptsExactlyItsLimit() throws {
        let sink = MemorySink(limit: 10)
        try sink.write([UInt8](repeating: 1, count: 10), at: 0)
        #expect(sink.bytes.count == 10)
    }

    @Test func memorySinkRefusesToGrowPastItsLimitWithEFBIG() throws {
        let sink = MemorySink(limit: 10)
        try sink.write([1, 2, 3], at: 0)
        let error = #expect(throws: SinkWriteError.self) { try sink.write([UInt8](repeating: 7, count: 8), at: 3) }
        #expect(error?.errno == 27)
        #expect(sink.bytes == [1, 2, 3], "a refused write stores nothing")
    }

    /// A zero-byte write stores nothing, even with a buffer that has no base address (as
    /// `FileSink` treats it), and does not grow the sink to its offset.
    @Test func memorySinkIgnoresAnEmptyWrite() async {
        await #expect(processExitsWith: .success) {
            let sink = MemorySink()
            try sink.write(UnsafeRawBufferPointer(start: nil, count: 0), at: 100)
            try [UInt8]().withUnsafeBytes { try sink.write($0, at: 50) }
            if !sink.bytes.isEmpty { exit(1) }
        }
    }

    /// A negative offset is refused instead of copying to before the storage.
    @Test func memorySinkRefusesANegativeOffset() async {
        await #expect(processExitsWith: .success) {
            let sink = MemorySink()
            do {
                try sink.write([1, 2, 3], at: -1)
            } catch is SinkWriteError {
                return
            }
            exit(1)
        }
    }
}
