import PeregrineCore
import Testing

@Suite("ContentRange(headerValue:)")
struct ContentRangeTests {
    /// A header value and the fields it must parse into.
    struct Parsed: Sendable, CustomTestStringConvertible {
        var header: String
        var first: Int64?
        var last: Int64?
        var completeLength: Int64?
        var testDescription: String { header }
    }

    static let validHeaders: [Parsed] = [
        Parsed(header: "bytes 0-99/1000", first: 0, last: 99, completeLength: 1000),
        Parsed(header: "bytes 0-99/*", first: 0, last: 99, completeLength: nil),
        Parsed(header: "bytes */1000", first: nil, last: nil, completeLength: 1000),
        Parsed(header: "bytes 999-999/1000", first: 999, last: 999, completeLength: 1000),
        Parsed(header: "bytes 0-0/1", first: 0, last: 0, completeLength: 1),
        Parsed(header: "bytes */0", first: nil, last: nil, completeLength: 0),
        Parsed(header: "bytes 12345-99999/*", first: 12345, last: 99999, completeLength: nil),
        Parsed(
            header: "bytes 5000000000-5999999999/6000000000", first: 5_000_000_000, last: 5_999_999_999,
            completeLength: 6_000_000_000),
        // The range unit is compared case-insensitively (RFC 9110 §14.1).
        Parsed(header: "Bytes 0-99/1000", first: 0, last: 99, completeLength: 1000),
        Parsed(header: "BYTES 0-99/1000", first: 0, last: 99, completeLength: 1000),
    ]

    @Test(arguments: validHeaders)
    func contentRangeParsesValidForms(_ expected: Parsed) throws {
        let range = try #require(ContentRange(headerValue: expected.header))
        #expect(range.first == expected.first)
        #expect(range.last == expected.last)
        #expect(range.completeLength == expected.completeLength)
    }

    @Test func contentRangeLengthCountsTheBytesOfTheRange() throws {
        #expect(try #require(ContentRange(headerValue: "bytes 0-99/1000")).length == 100)
        #expect(try #require(ContentRange(headerValue: "bytes 500-999/*")).length == 500)
        #expect(try #require(ContentRange(headerValue: "bytes 7-7/8")).length == 1)
        #expect(try #require(ContentRange(headerValue: "bytes */1000")).length == nil)
    }

    @Test func contentRangeDescriptionIsTheCanonicalHeader() throws {
        #expect(try #require(ContentRange(headerValue: "bytes 0-99/1000")).description == "bytes 0-99/1000")
        #expect(try #require(ContentRange(headerValue: "bytes 0-99/*")).description == "bytes 0-99/*")
        #expect(try #require(ContentRange(headerValue: "bytes */1000")).description == "bytes */1000")
    }

    @Test func contentRangeRejectsLastBeforeFirst() {
        #expect(ContentRange(headerValue: "bytes 100-99/1000") == nil)
        #expect(ContentRange(headerValue: "bytes 1-0/*") == nil)
    }

    @Test func contentRangeRejectsLastAtOrBeyondTheCompleteLength() {
        #expect(ContentRange(headerValue: "bytes 0-1000/1000") == nil)
        #expect(ContentRange(headerValue: "bytes 0-1500/1000") == nil)
        #expect(ContentRange(headerValue: "bytes 0-0/0") == nil)
        #expect(ContentRange(headerValue: "bytes 1000-1000/1000") == nil)
    }

    @Test(arguments: [
        "bytes -1-99/1000",
        "bytes 0--99/1000",
        "bytes -5--1/1000",
        "bytes 0-99/-1000",
        "bytes */-5",
        "bytes 0-99/-0x10",
    ])
    func contentRangeRejectsNegativeNumbers(_ header: String) {
        #expect(ContentRange(headerValue: header) == nil)
    }

    @Test(arguments: ["bytes 0-99", "bytes 0-99 1000", "bytes *", "bytes 0-99\\1000"])
    func contentRangeRejectsAMissingSlash(_ header: String) {
        #expect(ContentRange(headerValue: header) == nil)
    }

    @Test(arguments: [
        "",
        "garbage",
        "bytes",
        "bytes ",
        "items 0-99/1000",
        "bytes */*",
        "bytes 0-99/",
        "bytes /1000",
        "bytes -/1000",
        "bytes 0-/1000",
        "bytes -99/1000",
        "bytes a-b/1000",
        "bytes 0-99/10x0",
        "bytes 0-99/1000/1000",
        "bytes 0x0-0x63/1000",
        "bytes 0-99999999999999999999/*",
        "bytes 0.5-99/1000",
        "bytes 0-99/1e3",
    ])
    func contentRangeRejectsGarbage(_ header: String) {
        #expect(ContentRange(headerValue: header) == nil)
    }

    /// RFC 9110 allows only digits (`1*DIGIT`); Swift's `Int64(_:)` also accepts a leading `+`.
    @Test(arguments: ["bytes +0-99/1000", "bytes 0-+99/1000", "bytes 0-99/+1000", "bytes */+1000"])
    func contentRangeRejectsPlusSigns(_ header: String) {
        #expect(ContentRange(headerValue: header) == nil)
    }

    /// A server can send `bytes 0-9223372036854775807/*`; asking its length must not trap on overflow.
    @Test func contentRangeLengthOfTheLargestRangeDoesNotTrap() async {
        await #expect(processExitsWith: .success) {
            if let range = ContentRange(headerValue: "bytes 0-9223372036854775807/*") {
                // Either the parser rejects it, or `length` answers without trapping.
                _ = range.length
            }
        }
    }
}
