import PeregrineCore
import Testing

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
    @Test func lookupIgnoresTheCaseOfTheName() {
        let headers = HTTPHeaders([("Content-Type", "text/plain")])
        #expect(headers["content-type"] == "text/plain")
        #expect(headers["CONTENT-TYPE"] == "text/plain")
        #expect(headers["Content-Type"] == "text/plain")
        #expect(headers.contains(name: "cOnTeNt-TyPe"))
        #expect(headers.values(for: "CONTENT-type") == ["text/plain"])
    }

    @Test func lookupOfAnAbsentNameFindsNothing() {
        let headers = HTTPHeaders([("Content-Type", "text/plain")])
        #expect(headers["Content-Length"] == nil)
        #expect(!headers.contains(name: "Content-Length"))
        #expect(headers.values(for: "Content-Length").isEmpty)
        // A prefix or an extension of a name is another name.
        #expect(headers["Content"] == nil)
        #expect(headers["Content-Types"] == nil)
    }

    @Test func caseFoldingAppliesToASCIILettersOnly() {
        // `[` and `{`, `@` and `` ` ``, `_` and DEL differ only in bit 0x20 but are not letters.
        let headers = HTTPHeaders([("X-[a]", "1"), ("X-@", "2"), ("X-_", "3"), ("É", "4")])
        #expect(headers["X-{a}"] == nil)
        #expect(headers["x-[A]"] == "1")
        #expect(headers["X-`"] == nil)
        #expect(headers["X-\u{7F}"] == nil)
        #expect(headers["é"] == nil, "non-ASCII letters are not folded")
        #expect(headers["É"] == "4")
    }

    @Test func namesKeepTheCaseTheyWereGiven() {
        var headers = HTTPHeaders()
        headers.add(name: "x-CUSTOM-header", value: "v")
        #expect(headers.fields.map(\.name) == ["x-CUSTOM-header"])
    }

    @Test func repeatedFieldsAreKeptInOrder() {
        var headers = HTTPHeaders()
        headers.add(name: "WWW-Authenticate", value: "Basic realm=\"a\"")
        headers.add(name: "Date", value: "today")
        headers.add(name: "www-authenticate", value: "Digest realm=\"b\"")
        #expect(headers.count == 3)
        #expect(headers.values(for: "WWW-Authenticate") == ["Basic realm=\"a\"", "Digest realm=\"b\""])
        #expect(headers["www-authenticate"] == "Basic realm=\"a\"", "the subscript gives the first value")
        #expect(headers.map(\.name) == ["WWW-Authenticate", "Date", "www-authenticate"])
    }

    @Test func replaceOrAddReplacesEveryFieldOfTheNameByOne() {
        var headers = HTTPHeaders([("A", "1"), ("Range", "bytes=0-"), ("C", "3"), ("RANGE", "bytes=5-")])
        headers.replaceOrAdd(name: "range", value: "bytes=10-")
        #expect(headers.values(for: "Range") == ["bytes=10-"])
        #expect(
            headers.fields == [
                .init(name: "A", value: "1"), .init(name: "C", value: "3"), .init(name: "range", value: "bytes=10-"),
            ])
    }

    @Test func replaceOrAddAddsAnAbsentField() {
        var headers = HTTPHeaders([("A", "1")])
        headers.replaceOrAdd(name: "B", value: "2")
        #expect(headers.fields == [.init(name: "A", value: "1"), .init(name: "B", value: "2")])
    }

    @Test func replaceOrAddWithNilRemovesTheField() {
        var headers = HTTPHeaders([("A", "1"), ("Cookie", "x"), ("cookie", "y")])
        headers.replaceOrAdd(name: "COOKIE", value: nil)
        #expect(!headers.contains(name: "Cookie"))
        #expect(headers.fields == [.init(name: "A", value: "1")])
    }

    @Test func removeDropsEveryFieldOfTheNameAndKeepsTheRestInOrder() {
        var headers = HTTPHeaders([("A", "1"), ("Cookie", "x"), ("B", "2"), ("COOKIE", "y"), ("C", "3")])
        headers.remove(name: "cookie")
        #expect(headers.fields.map(\.name) == ["A", "B", "C"])
        #expect(headers.fields.map(\.value) == ["1", "2", "3"])
        headers.remove(name: "absent")
        #expect(headers.count == 3)
    }

    @Test func dictionaryLiteralKeepsTheLiteralsOrder() {
        let headers: HTTPHeaders = ["Zeta": "1", "Alpha": "2", "Mid": "3"]
        #expect(headers.fields.map(\.name) == ["Zeta", "Alpha", "Mid"])
        #expect(headers["alpha"] == "2")
    }

    @Test func emptyListHasNoFields() {
        let empty: HTTPHeaders = [:]
        #expect(empty.isEmpty)
        #expect(empty.count == 0)
        #expect(HTTPHeaders().isEmpty)
        #expect(!HTTPHeaders([("A", "1")]).isEmpty)
    }
}
