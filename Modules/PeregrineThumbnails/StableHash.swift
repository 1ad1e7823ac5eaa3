/// FNV-1a, 64 bits: a hash that stays the same across runs and machines (Swift's `Hasher` is
/// seeded per process), for file names and content identifiers. Not cryptographic.
enum StableHash {
    static func fnv1a(_ bytes: some Sequence<UInt8>, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// 32 hexadecimal digits from two differently seeded FNV-1a hashes of `text`.
    static func hex(_ text: String) -> String {
        hex(Array(text.utf8))
    }

    /// 32 hexadecimal digits from two differently seeded FNV-1a hashes of `bytes`.
    static func hex(_ bytes: [UInt8]) -> String {
        let first = fnv1a(bytes)
        let second = fnv1a(bytes, seed: 0x8422_2325_cbf2_9ce4 ^ UInt64(bytes.count))
        return digits(first) + digits(second)
    }

    static func digits(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
