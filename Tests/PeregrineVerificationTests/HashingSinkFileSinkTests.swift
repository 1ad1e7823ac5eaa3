import PeregrineEngine
import PeregrineTransport
import PeregrineVerification
import TestSupport
import Testing

/// A hashing sink in front of a `FileSink`: the digest computed while writing is the digest of
/// the file written, whatever the chunking — below and above the sink's background threshold.
@Suite("HashingSink over FileSink")
struct HashingSinkFileSinkTests {
    static let data = ChecksumTestFiles.bytes(20 << 20, seed: 0xF11E)

    @Test(arguments: [
        (algorithm: DigestAlgorithm.sha256, size: 20 << 20, seed: UInt64(1)),
        (algorithm: .sha256, size: 20 << 20, seed: 2),
        (algorithm: .md5, size: 12 << 20, seed: 3),
        (algorithm: .blake2b512, size: 9 << 20, seed: 4),
        (algorithm: .sha512, size: 3 << 20, seed: 5),
        (algorithm: .sha1, size: 4095, seed: 6),
    ])
    func digestWhileWritingEqualsTheDigestOfTheFile(_ run: (algorithm: DigestAlgorithm, size: Int, seed: UInt64))
        throws
    {
        let directory = try TemporaryDirectory(prefix: "peregrine-hashing")
        defer { directory.remove() }
        let path = directory.path("file.bin")
        let data = Array(Self.data[0..<run.size])
        let file = try FileSink(path: path)
        let sink = try HashingSink(run.algorithm, wrapping: file)
        let chunks = ChecksumTestFiles.randomChunks(total: data.count, seed: run.seed, largest: 700_000)
        try data.withUnsafeBytes { raw in
            for chunk in chunks {
                try sink.write(UnsafeRawBufferPointer(rebasing: raw[chunk]), at: Int64(chunk.lowerBound))
            }
        }
        try sink.flush()
        try file.close()

        let whileWriting = try sink.finish()
        let ofTheFile = try FileVerifier().checksum(ofFileAt: path, algorithm: run.algorithm)
        #expect(whileWriting == ofTheFile)
        #expect(whileWriting == (try ChecksumTestFiles.checksum(run.algorithm, of: data)))
        #expect(try FileVerifier().verify(fileAt: path, against: whileWriting) == .verified)
    }

    @Test func synchronizedOffsetIsReachedThroughTheWrappedSink() throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-hashing")
        defer { directory.remove() }
        let file = try FileSink(path: directory.path("file.bin"))
        let sink = try HashingSink(.sha256, wrapping: file)
        let data = Array(Self.data[0..<(10 << 20)])
        try data.withUnsafeBytes { try sink.write($0, at: 0) }
        // The engine keeps its own reference to the file sink for synchronize() and close().
        #expect(try file.synchronize() == Int64(data.count))
        try file.close()
        #expect(try sink.finish() == (try ChecksumTestFiles.checksum(.sha256, of: data)))
    }
}
