import PeregrineCore
import Testing

@Suite("ByteRange")
struct ByteRangeTests {
    @Test func closedRangeHeaderValueNamesBothEnds() {
        let range = ByteRange(start: 0, end: 99)
        #expect(range.specifier == "0-99")
        #expect(range.headerValue == "bytes=0-99")
        #expect(range.description == "bytes=0-99")
    }

    @Test func openRangeHeaderValueLeavesTheEndOut() {
        let range = ByteRange(start: 12345)
        #expect(range.end == nil)
        #expect(range.specifier == "12345-")
        #expect(range.headerValue == "bytes=12345-")
    }

    @Test func lengthCountsBothEndsInclusively() {
        #expect(ByteRange(start: 0, end: 99).length == 100)
        #expect(ByteRange(start: 500, end: 999).length == 500)
        #expect(ByteRange(start: 7, end: 7).length == 1)
    }

    @Test func openRangeHasNoLength() {
        #expect(ByteRange(start: 0).length == nil)
        #expect(ByteRange(start: 1 << 40).length == nil)
    }

    @Test func largeOffsetsAreWrittenInFull() {
        let range = ByteRange(start: 5_000_000_000, end: 9_999_999_999)
        #expect(range.headerValue == "bytes=5000000000-9999999999")
        #expect(range.length == 5_000_000_000)
    }
}
