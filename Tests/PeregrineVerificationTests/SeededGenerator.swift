/// A deterministic random number generator (SplitMix64), so a failing case can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes, eight at a time.
    mutating func bytes(_ count: Int) -> [UInt8] {
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
}
