import Foundation

/// SeededRandom: a small, fast, seeded generator, so a random test can be replayed exactly.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes, eight at a time.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { raw in
            var index = 0
            while index + 8 <= count {
                raw.storeBytes(of: next(), toByteOffset: index, as: UInt64.self)
                index += 8
            }
            var last = next()
            while index < count {
                raw[index] = UInt8(truncatingIfNeeded: last)
                last >>= 8
                index += 1
            }
        }
        return result
    }

    /// A chunk size from 1 to `limit`, spread over every order of magnitude (log-uniform), so that
    /// single bytes, odd sizes around a block and multi-megabyte writes all occur.
    public mutating func chunkSize(upTo limit: Int) -> Int {
        let bits = Int.random(in: 0...22, using: &self)
        return Int.random(in: 1...max(1, min(limit, 1 << bits)), using: &self)
    }

    /// The seeds a random test runs with: the one in the environment variable `name` when it is
    /// set (to replay a failure), else `defaults`. Each seed is printed, so a failing run names
    /// the value that replays it.
    public static func seeds(from name: String, defaults: [UInt64]) -> [UInt64] {
        let seeds =
            ProcessInfo.processInfo.environment[name].flatMap { UInt64($0) }.map { [$0] } ?? defaults
        print("seeds \(seeds.map(String.init).joined(separator: ",")) (replay one with \(name)=SEED)")
        return seeds
    }
}
