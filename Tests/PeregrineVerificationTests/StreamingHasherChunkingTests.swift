import PeregrineVerification
import TestSupport
import Testing

/// Feeding bytes in any chunking gives the same digest as one call with all of them.
@Suite("StreamingHasher chunking")
struct StreamingHasherChunkingTests {
    static let data: [UInt8] = {
        var generator = SeededRandom(seed: 0x00C0_FFEE)
        return generator.bytes(1 << 20)
    }()

    @Test(arguments: DigestAlgorithm.allCases, [1, 2, 3, 4])
    func randomChunkingsGiveTheOneShotDigest(_ algorithm: DigestAlgorithm, seed: UInt64) throws {
        let data = Self.data
        let oneShot = try StreamingHasher.digest(algorithm, of: data)
        var generator = SeededRandom(seed: seed &* 7919 &+ UInt64(algorithm.byteCount))
        var hasher = try StreamingHasher(algorithm)
        var done = 0
        data.withUnsafeBytes { raw in
            while done < raw.count {
                // Mostly small and odd sizes around the 64- and 128-byte blocks, sometimes large, sometimes empty.
                let limit = [0, 1, 63, 64, 65, 127, 128, 129, 1000, 70_000][Int.random(in: 0..<10, using: &generator)]
                let count = min(Int.random(in: 0...limit, using: &generator), raw.count - done)
                hasher.update(UnsafeRawBufferPointer(rebasing: raw[done..<(done + count)]))
                done += count
            }
            #expect(done == data.count)
        }
        let streamed = hasher.finalize()
        #expect(streamed == oneShot)
    }

    @Test(arguments: DigestAlgorithm.allCases)
    func byteByByteFeedingGivesTheOneShotDigest(_ algorithm: DigestAlgorithm) throws {
        let data = Array(Self.data[0..<4099])
        var hasher = try StreamingHasher(algorithm)
        for byte in data { hasher.update(CollectionOfOne(byte)) }
        #expect(hasher.finalize() == (try StreamingHasher.digest(algorithm, of: data)))
    }

    @Test(arguments: DigestAlgorithm.allCases)
    func nonContiguousSequenceGivesTheSameDigest(_ algorithm: DigestAlgorithm) throws {
        let data = Array(Self.data[0..<10_000])
        let lazy = data.indices.lazy.map { data[$0] }
        #expect(try StreamingHasher.digest(algorithm, of: lazy) == (try StreamingHasher.digest(algorithm, of: data)))
        #expect(
            try StreamingHasher.digest(algorithm, of: data[...]) == (try StreamingHasher.digest(algorithm, of: data)))
    }

    @Test(arguments: DigestAlgorithm.allCases)
    func emptyUpdatesChangeNothing(_ algorithm: DigestAlgorithm) throws {
        var hasher = try StreamingHasher(algorithm)
        hasher.update(UnsafeRawBufferPointer(start: nil, count: 0))
        hasher.update([UInt8]())
        hasher.update(Array("abc".utf8))
        hasher.update([UInt8]())
        #expect(hasher.finalize() == (try StreamingHasher.digest(algorithm, of: Array("abc".utf8))))
    }

    @Test(arguments: DigestAlgorithm.allCases)
    func hasherRemembersItsAlgorithm(_ algorithm: DigestAlgorithm) throws {
        let hasher = try StreamingHasher(algorithm)
        #expect(hasher.algorithm == algorithm)
    }

    @Test func concurrentHashersDoNotInterfere() async throws {
        let data = Array(Self.data[0..<200_000])
        let expected = try StreamingHasher.digest(.sha256, of: data)
        let results = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<8 { group.addTask { try StreamingHasher.digest(.sha256, of: data) } }
            var results: [[UInt8]] = []
            for try await digest in group { results.append(digest) }
            return results
        }
        #expect(results.count == 8)
        #expect(results.allSatisfy { $0 == expected })
    }
}
