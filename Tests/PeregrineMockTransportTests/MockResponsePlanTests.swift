import PeregrineCore
import PeregrineMockTransport
import Testing

@Suite("MockResponsePlan")
struct MockResponsePlanTests {
    let body = MockBody.generated(seed: 9, count: 1000)

    func get(_ headers: HTTPHeaders = [:], method: String = "GET") -> MockRequest {
        MockRequest(method: method, url: "http://mock.test/f", headers: headers)
    }

    @Test func wholeFileIsA200WithLengthAndValidators() {
        let route = MockRoute.file(body, entityTag: .fixed("\"v1\""), lastModified: "Mon, 01 Jan 2024 00:00:00 GMT")
        let plan = MockResponsePlan(request: get(), route: route)
        #expect(plan.status == 200)
        #expect(plan.headers["Content-Length"] == "1000")
        #expect(plan.headers["ETag"] == "\"v1\"")
        #expect(plan.headers["Last-Modified"] == "Mon, 01 Jan 2024 00:00:00 GMT")
        #expect(plan.headers["Accept-Ranges"] == "bytes")
        #expect(plan.headers["Content-Type"] == "application/octet-stream")
        #expect(plan.bodyRange == 0..<1000)
        #expect(plan.wireLength == 1000)
        #expect(!plan.closesConnection)
    }

    @Test func satisfiableRangeIsA206WithContentRange() {
        let plan = MockResponsePlan(request: get(["Range": "bytes=100-199"]), route: .file(body))
        #expect(plan.status == 206)
        #expect(plan.headers["Content-Range"] == "bytes 100-199/1000")
        #expect(plan.headers["Content-Length"] == "100")
        #expect(plan.bodyRange == 100..<200)
    }

    @Test func openAndSuffixRangesAreClampedToTheBody() {
        #expect(MockResponsePlan(request: get(["Range": "bytes=900-"]), route: .file(body)).bodyRange == 900..<1000)
        #expect(MockResponsePlan(request: get(["Range": "bytes=-10"]), route: .file(body)).bodyRange == 990..<1000)
        #expect(MockResponsePlan(request: get(["Range": "bytes=-5000"]), route: .file(body)).bodyRange == 0..<1000)
        #expect(MockResponsePlan(request: get(["Range": "bytes=990-5000"]), route: .file(body)).bodyRange == 990..<1000)
    }

    @Test func rangeBeyondTheEndIs416WithCompleteLength() {
        let plan = MockResponsePlan(request: get(["Range": "bytes=1000-"]), route: .file(body))
        #expect(plan.status == 416)
        #expect(plan.headers["Content-Range"] == "bytes */1000")
        #expect(plan.headers["Content-Length"] == "0")
        #expect(plan.wireLength == 0)
    }

    @Test func malformedOrMultipleRangesAreIgnored() {
        for value in ["bytes=5-2", "items=0-1", "bytes=0-1,5-6", "bytes=abc", "bytes="] {
            #expect(MockResponsePlan(request: get(["Range": value]), route: .file(body)).status == 200, "\(value)")
        }
    }

    @Test func ifRangeWithTheCurrentTagGetsTheRange() {
        let route = MockRoute.file(body, entityTag: .fixed("\"v1\""))
        let plan = MockResponsePlan(request: get(["Range": "bytes=10-", "If-Range": "\"v1\""]), route: route)
        #expect(plan.status == 206)
    }

    @Test func ifRangeWithAnotherTagGetsTheWholeBody() {
        let route = MockRoute.file(body, entityTag: .fixed("\"v2\""))
        let plan = MockResponsePlan(request: get(["Range": "bytes=10-", "If-Range": "\"v1\""]), route: route)
        #expect(plan.status == 200)
        #expect(plan.bodyRange == 0..<1000)
        #expect(plan.headers["Content-Range"] == nil)
    }

    @Test func weakTagsNeverMatchIfRange() {
        let route = MockRoute.file(body, entityTag: .fixed("W/\"v1\""))
        #expect(
            MockResponsePlan(request: get(["Range": "bytes=10-", "If-Range": "W/\"v1\""]), route: route).status == 200)
        #expect(MockResponsePlanTests.matches("\"v1\"", tag: "W/\"v1\"") == false)
    }

    @Test func ifRangeDateMatchesOnlyTheSameLastModified() {
        let date = "Mon, 01 Jan 2024 00:00:00 GMT"
        let route = MockRoute.file(body, lastModified: date)
        #expect(MockResponsePlan(request: get(["Range": "bytes=10-", "If-Range": date]), route: route).status == 206)
        #expect(
            MockResponsePlan(
                request: get(["Range": "bytes=10-", "If-Range": "Tue, 02 Jan 2024 00:00:00 GMT"]), route: route
            ).status == 200)
        // A date never matches an entity tag, nor a tag a date.
        #expect(!MockResponsePlan.ifRangeMatches(date, entityTag: "\"v1\"", lastModified: nil))
        #expect(!MockResponsePlan.ifRangeMatches("\"v1\"", entityTag: nil, lastModified: date))
    }

    static func matches(_ value: String, tag: String) -> Bool {
        MockResponsePlan.ifRangeMatches(value, entityTag: tag, lastModified: nil)
    }

    @Test func changingEntityTagIsNewOnEveryRequest() {
        let route = MockRoute.file(body, entityTag: .changesOnEveryRequest)
        #expect(MockResponsePlan(request: get(), route: route, requestNumber: 1).headers["ETag"] == "\"1\"")
        #expect(MockResponsePlan(request: get(), route: route, requestNumber: 2).headers["ETag"] == "\"2\"")
        let resumed = get(["Range": "bytes=10-", "If-Range": "\"1\""])
        #expect(MockResponsePlan(request: resumed, route: route, requestNumber: 2).status == 200)
    }

    @Test func routeThatDoesNotHonourRangesAnswers200WithoutAcceptRanges() {
        var route = MockRoute.file(body)
        route.honoursRanges = false
        let plan = MockResponsePlan(request: get(["Range": "bytes=10-"]), route: route)
        #expect(plan.status == 200)
        #expect(plan.headers["Accept-Ranges"] == nil)
    }

    @Test func ignoreRangeFaultAnswers200ThoughRangesAreAdvertised() {
        let plan = MockResponsePlan(
            request: get(["Range": "bytes=10-"]), route: .file(body).faulting(.ignoreRange))
        #expect(plan.status == 200)
        #expect(plan.headers["Accept-Ranges"] == "bytes")
        #expect(plan.bodyRange == 0..<1000)
    }

    @Test func wrongContentRangeFaultMovesOnlyTheHeader() {
        let plan = MockResponsePlan(
            request: get(["Range": "bytes=100-"]), route: .file(body).faulting(.wrongContentRange(shift: 7)))
        #expect(plan.status == 206)
        #expect(plan.headers["Content-Range"] == "bytes 107-1006/1000")
        #expect(plan.bodyRange == 100..<1000)
        let below = MockResponsePlan(
            request: get(["Range": "bytes=100-"]), route: .file(body).faulting(.wrongContentRange(shift: -500)))
        #expect(below.headers["Content-Range"] == "bytes 0-899/1000")
    }

    @Test func missingAuthorizationGets401WithEveryChallenge() {
        let route = MockRoute.file(body).requiringAuthorization(
            "Basic abc", challenges: ["Basic realm=\"a\"", "Digest realm=\"b\""])
        let plan = MockResponsePlan(request: get(["Authorization": "Basic wrong"]), route: route)
        #expect(plan.status == 401)
        #expect(plan.headers.values(for: "WWW-Authenticate") == ["Basic realm=\"a\"", "Digest realm=\"b\""])
        #expect(plan.body.allBytes == Array("unauthorized\n".utf8))
        #expect(MockResponsePlan(request: get(["Authorization": "Basic abc"]), route: route).status == 200)
    }

    @Test func noRouteIs404AndOtherMethodsAre405() {
        let missing = MockResponsePlan(request: get(), route: nil)
        #expect(missing.status == 404)
        #expect(missing.headers["Content-Length"] == "10")
        let post = MockResponsePlan(request: get(method: "POST"), route: .file(body))
        #expect(post.status == 405)
        #expect(post.headers["Allow"] == "GET, HEAD")
    }

    @Test func redirectCarriesItsLocation() {
        let plan = MockResponsePlan(request: get(), route: .redirect(308, to: "/elsewhere"))
        #expect(plan.status == 308)
        #expect(plan.reasonPhrase == "Permanent Redirect")
        #expect(plan.headers["Location"] == "/elsewhere")
    }

    @Test func serverErrorCarriesRetryAfter() {
        let plan = MockResponsePlan(request: get(["Range": "bytes=0-"]), route: .status(503, retryAfter: "30"))
        #expect(plan.status == 503)
        #expect(plan.headers["Retry-After"] == "30")
        #expect(plan.headers["Content-Range"] == nil)
    }

    @Test func headAnnouncesWhatGetWouldSendButSendsNoBody() {
        let plan = MockResponsePlan(request: get(method: "HEAD"), route: .file(body).faulting(.dropAfter(bytes: 10)))
        #expect(plan.status == 200)
        #expect(plan.headers["Content-Length"] == "1000")
        #expect(!plan.sendsBody)
        #expect(plan.wireLength == 0)
        #expect(!plan.closesConnection)
    }

    @Test func dropStallAndExtraFaultsShapeTheWire() {
        let drop = MockResponsePlan(request: get(), route: .file(body).faulting(.dropAfter(bytes: 300)))
        #expect(drop.ending == .dropAfter(300))
        #expect(drop.wireLength == 300)
        #expect(drop.closesConnection)
        #expect(drop.headers["Content-Length"] == "1000")

        let stall = MockResponsePlan(request: get(), route: .file(body).faulting(.stallAfter(bytes: 300)))
        #expect(stall.ending == .stallAfter(300))
        #expect(!stall.closesConnection)

        let extra = MockResponsePlan(request: get(), route: .file(body).faulting(.extraBytes(count: 5)))
        #expect(extra.ending == .extraBytes(5))
        #expect(extra.wireLength == 1005)
        var tail = [UInt8](repeating: 0, count: 10)
        tail.withUnsafeMutableBytes { extra.copyWireBytes(in: 995..<1005, into: $0) }
        #expect(Array(tail[0..<5]) == body.bytes(in: 995..<1000))
        #expect(Array(tail[5...]) == Array(repeating: MockResponsePlan.extraByte, count: 5))

        let late = MockResponsePlan(request: get(), route: .file(body).faulting(.dropAfter(bytes: 5000)))
        #expect(late.ending == .complete)
    }

    @Test func routeHeadersReplaceThePlannersToLie() {
        let route = MockRoute.file(body).adding(header: "Content-Length", value: "2000")
        let plan = MockResponsePlan(request: get(), route: route)
        #expect(plan.headers.values(for: "Content-Length") == ["2000"])
        #expect(plan.wireLength == 1000)
    }

    @Test func headTextIsAnHTTP11Head() {
        let plan = MockResponsePlan(request: get(), route: .status(404, body: .text("x")))
        #expect(plan.headText == "HTTP/1.1 404 Not Found\r\nContent-Length: 1\r\nContent-Type: text/plain\r\n\r\n")
    }
}
