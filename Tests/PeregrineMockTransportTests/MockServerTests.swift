import PeregrineCore
import PeregrineMockTransport
import Testing

@Suite("MockServer")
struct MockServerTests {
    @Test func routesAreFoundByPathIgnoringTheQuery() {
        let server = MockServer()
        server.setRoute(.file(.text("a")), for: "/files/a.bin")
        #expect(server.respond(to: MockRequest(method: "GET", url: "http://mock.test/files/a.bin?x=1")).status == 200)
        #expect(server.respond(to: MockRequest(method: "GET", url: "http://mock.test/files/b.bin")).status == 404)
    }

    @Test func hostRouteWinsOverAnyHostRoute() {
        let server = MockServer()
        server.setRoute(.file(.text("any")), for: "/f")
        server.setRoute(.file(.text("special")), for: "/f", host: "Special.Test")
        let special = server.respond(to: MockRequest(method: "GET", url: "http://special.test:8080/f"))
        #expect(special.body == .text("special"))
        let other = server.respond(to: MockRequest(method: "GET", url: "http://mock.test/f"))
        #expect(other.body == .text("any"))
    }

    @Test func routeSequenceServesInTurnThenRepeatsTheLast() {
        let server = MockServer()
        server.setRoutes([.status(503, retryAfter: "1"), .status(500), .file(.text("ok"))], for: "/flaky")
        let statuses = (0..<5).map { _ in server.respond(to: MockRequest(method: "GET", url: "http://m/flaky")).status }
        #expect(statuses == [503, 500, 200, 200, 200])
    }

    @Test func requestNumberDrivesTheChangingEntityTag() {
        let server = MockServer()
        server.setRoute(.file(.text("x"), entityTag: .changesOnEveryRequest), for: "/f")
        let tags = (0..<3).map { _ in server.respond(to: MockRequest(method: "GET", url: "http://m/f")).headers["ETag"]
        }
        #expect(tags == ["\"1\"", "\"2\"", "\"3\""])
    }

    @Test func logKeepsEveryRequestInOrder() {
        let server = MockServer()
        _ = server.respond(to: MockRequest(method: "GET", url: "http://m/a", headers: ["Range": "bytes=1-"]))
        _ = server.respond(to: MockRequest(method: "HEAD", url: "http://m/b"))
        #expect(server.requests.map(\.description) == ["GET http://m/a", "HEAD http://m/b"])
        #expect(server.requests(for: "/a").first?.headers["Range"] == "bytes=1-")
        server.clearRequests()
        #expect(server.requests.isEmpty)
    }

    @Test func removedRouteAnswers404() {
        let server = MockServer()
        server["/f"] = .file(.text("x"))
        #expect(server["/f"] != nil)
        server["/f"] = nil
        #expect(server.respond(to: MockRequest(method: "GET", url: "http://m/f")).status == 404)
        server.setRoute(.file(.text("x")), for: "/g")
        server.removeAllRoutes()
        #expect(server.route(for: "/g") == nil)
    }

    @Test func requestPathAndHostComeFromTheURL() {
        let request = MockRequest(method: "GET", url: "http://[::1]:8080/a%20b?q")
        #expect(request.path == "/a%20b")
        #expect(request.host == "::1")
        #expect(MockRequest(method: "GET", url: "http://m").path == "/")
    }

    @Test func pathAndHostFollowAChangedURL() {
        var request = MockRequest(method: "GET", url: "http://A.test/one?q=1")
        #expect(request.path == "/one")
        #expect(request.host == "a.test")
        request.url = "http://B.test:81/two/three"
        #expect(request.path == "/two/three")
        #expect(request.host == "b.test")
        #expect(request == MockRequest(method: "GET", url: "http://B.test:81/two/three"))
    }
}
