import PeregrineTransport
import PeregrineVerification
import Testing

/// Whatever the chunking and the buffering, a hashing sink computes the one-shot digest and
/// passes every byte on unchanged.
@Suite("HashingSink chunking")
struct HashingSinkChunkingTests {
    static let data = ChecksumTestFiles.bytes(3 << 20, seed: 0xBEEF)

    /// Writes `data` in the given chunks, at their offsets.
    static func write(_ data: [UInt8], in chunks: [Range<Int>], to sink: HashingSink, from start: Int64 = 0) throws {
        try data.withUnsafeBytes { raw in
            for chunk in chunks {
                try sink.write(UnsafeRawBufferPointer(rebasing: raw[chunk]), at: start + Int64(chunk.lowerBound))
            }
        }
    }

    @Test(arguments: DigestAlgorithm.allCases, [UInt64(1), 2])
    func randomChunkSizesGiveTheOneShotDigest(_ algorithm: DigestAlgorithm, seed: UInt64) throws {
        let data = Array(Self.data[0..<(1 << 20) + 12_345])
        let recorder = HashingSinkRecorder()
        let sink = try HashingSink(algorithm, wrapping: recorder)
        let chunks = ChecksumTestFiles.randomChunks(total: data.count, seed: seed &* 31 &+ UInt64(algorithm.byteCount))
        try Self.write(data, in: chunks, to: sink)
        try sink.flush()
        #expect(try sink.finish() == ChecksumTestFiles.checksum(algorithm, of: data))
        #expect(recorder.bytes == data)
        #expect(recorder.flushCount == 1)
    }

    /// Tiny buffers: the writer waits for the hasher again and again, and the ring wraps many times.
    @Test(arguments: [
        (capacity: 1, count: 2), (capacity: 1000, count: 2), (capacity: 4096, count: 3), (capacity: 65_536, count: 8),
    ])
    func smallBuffersWrapAroundAndStillGiveTheOneShotDigest(_ buffering: (capacity: Int, count: Int)) throws {
        let data = Array(Self.data[0..<(buffering.capacity == 1 ? 20_000 : Self.data.count)])
        let options = HashingSink.Options(bufferCapacity: buffering.capacity, bufferCount: buffering.count)
        let sink = try HashingSink(.sha256, downstream: .none, options: options)
        try Self.write(data, in: ChecksumTestFiles.randomChunks(total: data.count, seed: 7), to: sink)
        #expect(try sink.finish() == ChecksumTestFiles.checksum(.sha256, of: data))
    }

    @Test(arguments: DigestAlgorithm.allCases)
    func nothingWrittenGivesTheDigestOfNothing(_ algorithm: DigestAlgorithm) throws {
        let sink = try HashingSink(algorithm, downstream: .none)
        #expect(try sink.finish() == ChecksumTestFiles.checksum(algorithm, of: []))
    }

    @Test func emptyWritesAnywhereChangeNothing() throws {
        let sink = try HashingSink(.sha256, downstream: .none)
        let data = Array(Self.data[0..<5000])
        try data.withUnsafeBytes { raw in
            try sink.write(UnsafeRawBufferPointer(rebasing: raw[0..<0]), at: 999)
            try sink.write(UnsafeRawBufferPointer(rebasing: raw[0..<2500]), at: 0)
            try sink.write(UnsafeRawBufferPointer(start: nil, count: 0), at: 0)
            try sink.write(UnsafeRawBufferPointer(rebasing: raw[2500...]), at: 2500)
        }
        #expect(try sink.finish() == ChecksumTestFiles.checksum(.sha256, of: data))
    }

    @Test func stateFollowsTheOffsetsWritten() throws {
        let sink = try HashingSink(.md5, downstream: .none)
        #expect(sink.state == .hashing(nextOffset: 0))
        try [UInt8](repeating: 1, count: 100).withUnsafeBytes { try sink.write($0, at: 0) }
        #expect(sink.state == .hashing(nextOffset: 100))
        let checksum = try sink.finish()
        #expect(sink.state == .finished(checksum))
    }

    @Test func concurrentSinksDoNotInterfere() async throws {
        let data = Array(Self.data[0..<(1 << 20)])
        let expected = try ChecksumTestFiles.checksum(.sha256, of: data)
        let results = try await withThrowingTaskGroup(of: Checksum.self) { group in
            for seed in 0..<6 {
                group.addTask {
                    let sink = try HashingSink(.sha256, downstream: .none)
                    try Self.write(
                        data, in: ChecksumTestFiles.randomChunks(total: data.count, seed: UInt64(seed)), to: sink)
                    return try sink.finish()
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 6)
        #expect(results.allSatisfy { $0 == expected })
    }
}
