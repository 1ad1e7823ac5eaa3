/// What is needed to continue a download where it stopped.
///
/// Invariant kept by the engine: `offset` never exceeds the bytes known to be synced to disk.
public struct ResumeRecord: Sendable, Hashable, Codable {
    /// The number of leading bytes of the file already on disk and synced.
    public var offset: Int64
    /// The validator sent as `If-Range`, when the server gave one.
    public var validator: ResumeValidator?
    /// The complete length of the file, when the server told it.
    public var expectedLength: Int64?

    /// Creates a record.
    public init(offset: Int64, validator: ResumeValidator?, expectedLength: Int64?) {
        self.offset = offset
        self.validator = validator
        self.expectedLength = expectedLength
    }
}
