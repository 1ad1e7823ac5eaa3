import Testing

/// Checks that the file at `path` holds exactly `expected`, naming the first differing byte
/// instead of printing megabytes.
func expectFile(
    _ path: String,
    holds expected: [UInt8],
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let actual = try FileBytes.read(path)
    #expect(actual.count == expected.count, "file length; \(comment ?? "")", sourceLocation: sourceLocation)
    let difference = FileBytes.firstDifference(actual, expected)
    #expect(
        difference == nil,
        "first differing byte at offset \(difference ?? -1) of \(expected.count); \(comment ?? "")",
        sourceLocation: sourceLocation
    )
}
