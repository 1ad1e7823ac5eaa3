/// What is needed to continue a download where it stopped.
///
/// Invariant kept by the engine: `offset` never exceeds the bytes known to be synced to disk,
/// and neither do ``completedRanges``.
public struct ResumeRecord: Sendable, Hashable, Codable {
    /// The number of leading bytes of the file already on disk and synced.
    public var offset: Int64
    /// The validator sent as `If-Range`, when the server gave one.
    public var validator: ResumeValidator?
    /// The complete length of the file, when the server told it.
    public var expectedLength: Int64?
    /// Ranges past ``offset`` that are on disk and synced too (a segmented download's pieces),
    /// sorted and disjoint; a resume fetches only the holes between them.
    public var completedRanges: [Range<Int64>]

    /// Creates a record.
    public init(
        offset: Int64, validator: ResumeValidator?, expectedLength: Int64?, completedRanges: [Range<Int64>] = []
    ) {
        self.offset = offset
        self.validator = validator
        self.expectedLength = expectedLength
        self.completedRanges = completedRanges
    }

    private enum CodingKeys: String, CodingKey {
        case offset, validator, expectedLength, completedRanges
    }

    /// Reads a record; `completedRanges` may be missing (records from before segments).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            offset: try container.decode(Int64.self, forKey: .offset),
            validator: try container.decodeIfPresent(ResumeValidator.self, forKey: .validator),
            expectedLength: try container.decodeIfPresent(Int64.self, forKey: .expectedLength),
            completedRanges: try container.decodeIfPresent([Range<Int64>].self, forKey: .completedRanges) ?? [])
    }

    /// The bytes on disk past the start that a resume keeps: the prefix and the ranges.
    public var keptByteCount: Int64 {
        completedRanges.reduce(offset) { $0 + Int64($1.count) }
    }

    /// The end of the last byte on disk that the record counts.
    public var lastKeptByte: Int64 {
        max(offset, completedRanges.last?.upperBound ?? 0)
    }
}
