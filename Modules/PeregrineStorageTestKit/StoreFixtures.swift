import PeregrineStorage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Values that exercise every field of the stored types and every property-list case: what a
/// store must give back exactly.
public enum StoreFixtures {
    public static let date = Date(timeIntervalSince1970: 1_700_000_000.123_456)

    public static let metaInfo: [String: PropertyListValue] = [
        "string": .string("héllo \"quoted\"\n\t\\ / 日本 😀 \u{1}"),
        "integer": .integer(42),
        "max": .integer(.max),
        "min": .integer(.min),
        "negative": .integer(-7),
        "realOne": .real(1.0),
        "fraction": .real(0.1),
        "tiny": .real(.leastNonzeroMagnitude),
        "huge": .real(1e300),
        "negativeReal": .real(-2.5),
        "true": .boolean(true),
        "false": .boolean(false),
        "date": .date(date),
        "oldDate": .date(Date(timeIntervalSince1970: -1_234_567.5)),
        "data": .data(Data([0, 1, 2, 0x7F, 0x80, 0xFF])),
        "emptyData": .data(Data()),
        "longData": .data(Data((0..<300).map { UInt8($0 & 0xFF) })),
        "array": .array([.integer(1), .real(1), .string("1"), .boolean(true), .array([]), .dictionary([:])]),
        "nested": .dictionary([
            "inner": .dictionary(["when": .date(date), "bytes": .data(Data([9]))]),
            "list": .array([.integer(-1), .integer(256), .integer(65_536), .integer(4_294_967_296)]),
        ]),
        "looksTagged": .dictionary(["$date": .real(3.0)]),
        "looksTaggedData": .dictionary(["$data": .string("AQ==")]),
        "emptyDictionary": .dictionary([:]),
        "": .string("empty key"),
        "longString": .string(String(repeating: "ab", count: 100)),
    ]

    public static func fullTask(_ index: Int = 0) -> StoredTask {
        StoredTask(
            urlString: "https://example.com/files/\(index)/name%20with%20spaces.zip?x=1&y=\"2\"",
            list: "videos", displayName: "Display ✓ \(index)", fileName: "folder ✓/2026/name with spaces.zip",
            temporaryFileName: ".name with spaces.zip.peregrine", preferredFileName: "preferred.zip",
            kind: .other, mimeType: "application/zip", expectedLength: 9_000_000_000, receivedLength: 1234,
            state: .failed(FailureReason(.httpStatus, httpStatus: 404, message: "Not Found: \"x\"\n")),
            resumeRecord: ResumeRecord(offset: 1024, validator: .entityTag("\"abc\""), expectedLength: 9_000_000_000),
            addedAt: date, finishedAt: Date(timeIntervalSince1970: 1_700_000_100.987_654), metaInfo: metaInfo,
            checksum: "sha256=abcdef",
            verification: StoredVerification(status: "mismatch", expected: "sha256=ab", actual: "sha256=cd"),
            checksumURL: "https://example.com/SHA256SUMS",
            verificationRetry: StoredVerificationRetry(maxAttempts: 5, mismatchedFile: "delete"), maxConnections: 8,
            speedLimit: 512 << 10,
            mirrors: ["https://mirror.example.org/files/\(index)/name%20with%20spaces.zip", "http://[::1]:8080/m ✓"],
            subdirectory: "folder ✓/2026")
    }

    public static func task(_ index: Int, state: DownloadState = .pending, received: Int64 = 0) -> StoredTask {
        StoredTask(
            urlString: "https://example.com/\(index).bin", fileName: "\(index).bin", kind: .other,
            expectedLength: 1000, receivedLength: received, state: state,
            addedAt: Date(timeIntervalSinceReferenceDate: Double(index) + 0.25))
    }

    public static let list = StoredList(
        identifier: "videos", sections: [["https://a/1", "https://a/2"], [], ["https://a/3"]],
        sectionTitles: ["Today", "Yesterday", "Older"], trash: ["https://a/9"], sortType: "fileName",
        sortOrder: "descending", sectioning: 5, addTimeReference: date, maxDownloadCount: 3)

    public static let thumbnail = StoredCustomThumbnail(
        fileName: "thumb-1.png", width: 128, height: 96, pixelFormat: "rgba8", format: "png",
        contentIdentifier: "sha256:00ff")

    public static let configuration: [String: PropertyListValue] = [
        "maxDownloadCount": .integer(3), "trashOpen": .boolean(true), "speed": .real(1.0),
    ]
}
