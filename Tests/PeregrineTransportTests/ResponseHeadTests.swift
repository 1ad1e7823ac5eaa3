import PeregrineCore
import PeregrineTransport
import Testing

@Suite("ResponseHead accessors")
struct ResponseHeadTests {
    static func head(_ status: Int, _ headers: [(String, String)]) -> ResponseHead {
        ResponseHead(status: status, headers: HTTPHeaders(headers), effectiveURL: "https://a.example/f")
    }

    static func head(_ headers: [(String, String)]) -> ResponseHead { head(200, headers) }

    @Test func contentLengthIsReadFromTheHeader() {
        #expect(Self.head([("Content-Length", "1234")]).contentLength == 1234)
        #expect(Self.head([("content-length", " 0 ")]).contentLength == 0)
        #expect(Self.head([("Content-Length", "10000000000")]).contentLength == 10_000_000_000)
    }

    @Test(arguments: ["", "-1", "abc", "12 34", "1.5", "99999999999999999999", "0x10"])
    func invalidContentLengthIsIgnored(_ value: String) {
        #expect(Self.head([("Content-Length", value)]).contentLength == nil)
    }

    @Test func missingContentLengthIsNil() {
        #expect(Self.head([("Content-Type", "text/plain")]).contentLength == nil)
    }

    @Test func completeLengthOfA206ComesFromContentRange() {
        let head = Self.head(206, [("Content-Length", "100"), ("Content-Range", "bytes 0-99/1000")])
        #expect(head.contentLength == 100)
        #expect(head.completeLength == 1000)
        #expect(head.contentRange == ContentRange(first: 0, last: 99, completeLength: 1000))
    }

    @Test func completeLengthOfA206WithAnUnknownTotalIsNil() {
        #expect(Self.head(206, [("Content-Length", "100"), ("Content-Range", "bytes 0-99/*")]).completeLength == nil)
        #expect(Self.head(206, [("Content-Length", "100")]).completeLength == nil)
        #expect(
            Self.head(206, [("Content-Length", "100"), ("Content-Range", "bytes 99-0/1000")]).completeLength == nil)
    }

    @Test func completeLengthOfA200IsTheContentLength() {
        #expect(Self.head(200, [("Content-Length", "1000")]).completeLength == 1000)
        // A Content-Range on a 200 does not describe the body.
        #expect(Self.head(200, [("Content-Length", "1000"), ("Content-Range", "bytes 0-9/50")]).completeLength == 1000)
        #expect(Self.head(200, []).completeLength == nil)
    }

    @Test func mimeTypeDropsParametersAndLowerCases() {
        #expect(Self.head([("Content-Type", "Text/HTML; charset=UTF-8")]).mimeType == "text/html")
        #expect(Self.head([("content-type", "  application/octet-stream  ")]).mimeType == "application/octet-stream")
        #expect(Self.head([("Content-Type", "image/png;q=1;x=2")]).mimeType == "image/png")
        #expect(Self.head([("Content-Type", "video/mp4")]).mimeType == "video/mp4")
    }

    @Test func mimeTypeIsNilWithoutContentType() {
        #expect(Self.head([("Content-Length", "1")]).mimeType == nil)
    }

    @Test func validatorsAreTrimmedAndQuotesKept() {
        let head = Self.head([("ETag", " \"abc\" "), ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT ")])
        #expect(head.entityTag == "\"abc\"")
        #expect(head.lastModified == "Wed, 21 Oct 2015 07:28:00 GMT")
    }

    @Test func resumeValidatorPrefersAStrongEntityTag() {
        let head = Self.head([("ETag", "\"abc\""), ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")])
        #expect(head.resumeValidator == .entityTag("\"abc\""))
    }

    @Test func resumeValidatorFallsBackToTheDateForAWeakTag() {
        let head = Self.head([("etag", "W/\"abc\""), ("last-modified", "Wed, 21 Oct 2015 07:28:00 GMT")])
        #expect(head.resumeValidator == .lastModified("Wed, 21 Oct 2015 07:28:00 GMT"))
    }

    @Test func resumeValidatorIsNilWithoutValidators() {
        #expect(Self.head([("Content-Length", "5")]).resumeValidator == nil)
        #expect(Self.head([("ETag", "W/\"weak\"")]).resumeValidator == nil)
    }

    @Test func isSuccessCoversExactly2xx() {
        for status in [200, 201, 204, 206, 299] { #expect(Self.head(status, []).isSuccess) }
        for status in [100, 199, 300, 304, 404, 416, 500] { #expect(!Self.head(status, []).isSuccess) }
    }

    @Test func contentLengthFollowsChangedHeaders() {
        var head = Self.head([("Content-Length", "5")])
        #expect(head.contentLength == 5)
        head.headers.replaceOrAdd(name: "content-length", value: "12")
        #expect(head.contentLength == 12)
        #expect(head.completeLength == 12)
        head.headers.remove(name: "Content-Length")
        #expect(head.contentLength == nil)
        head.headers = HTTPHeaders([("Content-Length", "7")])
        #expect(head.contentLength == 7)
    }
}
