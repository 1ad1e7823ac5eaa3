import PeregrineMockTransport
import PeregrineVerification

/// What reached a sink: where the bytes start, how many, and their SHA-256.
public struct ConformanceSinkRecord: Sendable, Hashable, CustomStringConvertible {
    /// The offset of the first byte, or nil when nothing was written.
    public var start: Int64?
    /// The number of bytes.
    public var count: Int64
    /// The lower-case hex SHA-256 of the bytes.
    public var sha256: String

    /// Creates a record of `bytes` written from `start`.
    public init(start: Int64?, bytes: [UInt8]) {
        self.start = bytes.isEmpty ? nil : start
        count = Int64(bytes.count)
        sha256 = (try! StreamingHasher.digest(.sha256, of: bytes)).hexString
    }

    /// The record a sink holding exactly `range` of `body`, written at its own offsets, has.
    public init(body: MockBody, range: Range<Int64>) {
        var hasher = try! StreamingHasher(.sha256)
        body.forEachChunk(in: range) { hasher.update($0) }
        start = range.isEmpty ? nil : range.lowerBound
        count = Int64(range.count)
        sha256 = hasher.finalize().hexString
    }

    public var description: String {
        guard let start else { return "nothing written" }
        return "bytes \(start)..<\(start + count) sha256=\(sha256)"
    }
}
