import Foundation
import PeregrineVerification
import TestSupport

/// Scratch files and byte patterns for the checksum, hashing-sink and file-verifier tests.
enum ChecksumTestFiles {
    /// `count` deterministic random bytes.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededRandom(seed: seed)
        return generator.bytes(count)
    }

    /// Writes `bytes` to `path`, replacing what was there.
    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The file's bytes.
    static func contents(of path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Cuts `0..<total` into consecutive ranges of random lengths, mostly small and odd, some
    /// empty, some larger than a hashing buffer.
    static func randomChunks(total: Int, seed: UInt64, largest: Int = 300_000) -> [Range<Int>] {
        var generator = SeededRandom(seed: seed)
        var chunks: [Range<Int>] = []
        var start = 0
        while start < total {
            let limits = [0, 1, 7, 63, 64, 65, 4095, 4096, 4097, 65_536, largest]
            let limit = limits[Int.random(in: 0..<limits.count, using: &generator)]
            let count = min(Int.random(in: 0...limit, using: &generator), total - start)
            chunks.append(start..<(start + count))
            start += count
        }
        return chunks
    }

    /// The one-shot checksum of `bytes`.
    static func checksum(_ algorithm: DigestAlgorithm, of bytes: [UInt8]) throws -> Checksum {
        try Checksum(algorithm, digest: StreamingHasher.digest(algorithm, of: bytes))
    }

    /// A checksum of the right length that is not the digest of `bytes`.
    static func wrongChecksum(_ algorithm: DigestAlgorithm, for bytes: [UInt8]) throws -> Checksum {
        var digest = try StreamingHasher.digest(algorithm, of: bytes)
        digest[0] ^= 0xFF
        return try Checksum(algorithm, digest: digest)
    }
}
