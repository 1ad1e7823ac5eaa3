import Foundation

/// SplitMix64: a small, fast, seeded generator, so a random test can be replayed exactly.
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
