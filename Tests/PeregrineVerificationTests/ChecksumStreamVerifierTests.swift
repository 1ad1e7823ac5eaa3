import PeregrineVerification
import Testing

/// Verifying a stream: chunks fed in any sizes give the one-shot answer.
@Suite("StreamVerifier")
struct ChecksumStreamVerifierTests {
    static let data = ChecksumTestFiles.bytes(600_000, seed: 42)

    @Test(arguments: DigestAlgorithm.allCases)
    func randomChunkSizesGiveTheOneShotResult(_ algorithm: DigestAlgorithm) throws {
        let expected = try ChecksumTestFiles.checksum(algorithm, of: Self.data)
        var verifier = try StreamVerifier(expecting: expected)
        Self.data.withUnsafeBytes { raw in
            for chunk in ChecksumTestFiles.randomChunks(total: raw.count, seed: UInt64(algorithm.byteCount)) {
                verifier.update(UnsafeRawBufferPointer(rebasing: raw[chunk]))
            }
        }
        #expect(verifier.byteCount == Int64(Self.data.count))
        #expect(verifier.finish() == .verified)
    }

    @Test(arguments: DigestAlgorithm.allCases)
    func wrongBytesGiveAMismatchWithTheActualDigest(_ algorithm: DigestAlgorithm) throws {
        let expected = try ChecksumTestFiles.wrongChecksum(algorithm, for: Self.data)
        var verifier = try StreamVerifier(expecting: expected)
        verifier.update(Self.data[0..<1000])
        verifier.update(Self.data[1000...].lazy.map { $0 })
        let actual = try ChecksumTestFiles.checksum(algorithm, of: Self.data)
        #expect(verifier.finish() == .mismatch(expected: expected, actual: actual))
    }

    @Test func asyncSequenceOfChunksIsVerified() async throws {
        let expected = try ChecksumTestFiles.checksum(.sha256, of: Self.data)
        let chunks = ChecksumTestFiles.randomChunks(total: Self.data.count, seed: 9).map { Array(Self.data[$0]) }
        let stream = AsyncStream<[UInt8]> { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        }
        #expect(try await StreamVerifier.verify(stream, against: expected) == .verified)
        let wrong = try ChecksumTestFiles.wrongChecksum(.sha256, for: Self.data)
        let again = AsyncStream<[UInt8]> { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        }
        #expect(try await StreamVerifier.verify(again, against: wrong) == .mismatch(expected: wrong, actual: expected))
    }

    @Test func errorsOfTheStreamReachTheCaller() async throws {
        struct Broken: Error {}
        let expected = try ChecksumTestFiles.checksum(.sha256, of: Self.data)
        let stream = AsyncThrowingStream<[UInt8], any Error> { continuation in
            continuation.yield([1, 2, 3])
            continuation.finish(throwing: Broken())
        }
        await #expect(throws: Broken.self) { try await StreamVerifier.verify(stream, against: expected) }
    }
}
