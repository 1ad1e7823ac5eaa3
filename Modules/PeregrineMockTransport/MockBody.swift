/// The body of a mock route: given bytes, or bytes generated from a seed.
///
/// A generated body is computed on the fly for any offset, so a 1 GiB body costs no memory,
/// and ``bytes(in:)`` / ``copyBytes(in:into:)`` give tests any range of it to compute the bytes
/// or the digest a download must produce. Generation is a pure function of the seed and the
/// offset (SplitMix64 over 8-byte words, little-endian), stable across runs and platforms.
public struct MockBody: Sendable, Hashable, CustomStringConvertible {
    private enum Storage: Sendable, Hashable {
        case bytes([UInt8])
        case generated(seed: UInt64, count: Int64)
    }

    private let storage: Storage

    private init(_ storage: Storage) { self.storage = storage }

    /// A body made of these bytes.
    public static func bytes(_ bytes: [UInt8]) -> MockBody { MockBody(.bytes(bytes)) }

    /// A body made of the UTF-8 bytes of a string.
    public static func text(_ text: String) -> MockBody { MockBody(.bytes(Array(text.utf8))) }

    /// A body of `count` pseudo-random bytes derived from `seed`, generated as they are read.
    ///
    /// - Precondition: `count >= 0`.
    public static func generated(seed: UInt64, count: Int64) -> MockBody {
        precondition(count >= 0, "a generated body has a length of at least zero")
        return MockBody(.generated(seed: seed, count: count))
    }

    /// An empty body.
    public static let empty = MockBody(.bytes([]))

    /// The length of the body in bytes.
    public var count: Int64 {
        switch storage {
        case .bytes(let bytes): Int64(bytes.count)
        case .generated(_, let count): count
        }
    }

    /// Whether the body has no bytes.
    public var isEmpty: Bool { count == 0 }

    /// Copies the bytes of `range` into `buffer`, which must hold at least `range.count` bytes.
    ///
    /// O(range.count), no allocation.
    /// - Precondition: `range` lies within `0..<count`.
    public func copyBytes(in range: Range<Int64>, into buffer: UnsafeMutableRawBufferPointer) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range \(range) outside the body of \(count)")
        precondition(buffer.count >= range.count, "buffer too small for \(range.count) bytes")
        guard !range.isEmpty else { return }
        switch storage {
        case .bytes(let bytes):
            bytes.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(
                    from: source.baseAddress!.advanced(by: Int(range.lowerBound)), byteCount: range.count)
            }
        case .generated(let seed, _):
            Self.generate(seed: seed, from: range.lowerBound, count: range.count, into: buffer)
        }
    }

    /// The bytes of `range`.
    ///
    /// - Precondition: `range` lies within `0..<count`.
    public func bytes(in range: Range<Int64>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: range.count) { buffer, initialized in
            copyBytes(in: range, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = range.count
        }
    }

    /// All the bytes of the body; meant for small bodies.
    public var allBytes: [UInt8] { bytes(in: 0..<count) }

    /// Calls `body` with consecutive pieces of `range`, each at most `chunkSize` bytes, reusing
    /// one buffer: to hash or compare a large range without holding it in memory.
    public func forEachChunk(
        in range: Range<Int64>, chunkSize: Int = 1 << 20, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        precondition(chunkSize > 0, "chunks hold at least one byte")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 8)
        defer { buffer.deallocate() }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let end = min(range.upperBound, offset + Int64(chunkSize))
            copyBytes(in: offset..<end, into: buffer)
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<Int(end - offset)]))
            offset = end
        }
    }

    public var description: String {
        switch storage {
        case .bytes(let bytes): "\(bytes.count) given bytes"
        case .generated(let seed, let count): "\(count) bytes generated from seed \(seed)"
        }
    }

    /// The 8-byte word at `index` of the generated stream: SplitMix64's output function.
    @inline(__always)
    private static func word(seed: UInt64, index: UInt64) -> UInt64 {
        var z = seed &+ (index &+ 1) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private static func generate(
        seed: UInt64, from start: Int64, count: Int, into buffer: UnsafeMutableRawBufferPointer
    ) {
        var written = 0
        var offset = UInt64(start)
        // The unaligned head, byte by byte.
        while written < count, offset & 7 != 0 {
            buffer[written] = UInt8(truncatingIfNeeded: word(seed: seed, index: offset >> 3) >> ((offset & 7) * 8))
            written += 1
            offset += 1
        }
        // Whole words.
        while count - written >= 8 {
            let value = word(seed: seed, index: offset >> 3).littleEndian
            buffer.storeBytes(of: value, toByteOffset: written, as: UInt64.self)
            written += 8
            offset += 8
        }
        // The tail.
        while written < count {
            buffer[written] = UInt8(truncatingIfNeeded: word(seed: seed, index: offset >> 3) >> ((offset & 7) * 8))
            written += 1
            offset += 1
        }
    }
}
