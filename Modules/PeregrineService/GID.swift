import Peregrine

/// An aria2 GID: a download's 64-bit identifier, written as 16 lowercase hex digits.
public struct GID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The identifier.
    public var rawValue: UInt64

    /// Creates a GID from its value.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// Reads exactly 16 hex digits (either case); nil otherwise.
    public init?(hex: String) {
        guard hex.utf8.count == 16, let value = UInt64(hex, radix: 16) else { return nil }
        rawValue = value
    }

    /// A random GID; never 0 (aria2 never hands out 0).
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> GID {
        GID(UInt64.random(in: 1...UInt64.max, using: &generator))
    }

    /// The GID every service of a fleet gives the task of `key` (the queue's key, a normalized
    /// URL), so that a download has one GID on every service: the queue's `QueueKeyHash` of the
    /// key, never 0.
    static func fleet(_ key: String) -> GID {
        let hash = QueueKeyHash.of(key)
        return GID(hash == 0 ? 1 : hash)
    }

    /// The queue key hashes whose fleet GID this is (``fleet(_:)`` makes 1 of 0 too).
    var fleetKeyHashes: [UInt64] { rawValue == 1 ? [1, 0] : [rawValue] }

    /// 16 lowercase hex digits.
    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    public static func < (lhs: GID, rhs: GID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether `text` can be a GID or a GID prefix, as aria2 accepts: 1 to 16 hex digits.
    static func isHexPrefix(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 16 && text.utf8.allSatisfy { $0.isHexDigit }
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
