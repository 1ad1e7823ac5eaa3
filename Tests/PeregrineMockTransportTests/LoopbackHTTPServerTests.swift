import PeregrineCore
import PeregrineMockTransport
import TestSupport
import Testing

/// The loopback server sends, over real sockets, what the response planner plans.
@Suite("LoopbackHTTPServer")
struct LoopbackHTTPServerTests {
    let routes = MockServer()
    let body = MockBody.generated(seed: 77, count: 100_000)

    func withServer(_ test: (LoopbackHTTPServer) throws -> Void) throws {
        let server = LoopbackHTTPServer(serving: routes)
        try server.start()
        defer { server.stop() }
        try test(server)
    }

    @Test func servesThePlannedHeadAndBodyAndLogsTheURL() throws {
        routes.setRoute(.file(body, entityTag: .fixed("\"e\"")), for: "/files/a.bin")
        try withServer { server in
            #expect(server.port > 0)
            #expect(server.baseURL == "http://127.0.0.1:\(server.port)")
            let client = try LoopbackHTTPClient(port: server.port)
            client.sendRequest("GET", "/files/a.bin?x=1", host: "127.0.0.1:\(server.port)")
            let response = try #require(client.readResponse())
            let plan = MockResponsePlan(
                request: MockRequest(method: "GET", url: server.baseURL + "/files/a.bin"),
                route: routes.route(for: "/files/a.bin"), requestNumber: 1)
            #expect(response.headText == plan.headText)
            #expect(response.body == body.allBytes)
            #expect(!response.endedEarly)
            #expect(routes.requests.map(\.url) == [server.baseURL + "/files/a.bin?x=1"])
            #expect(routes.requests.first?.headers["Host"] == "127.0.0.1:\(server.port)")
        }
    }

    @Test func servesRangesAnd416() throws {
        routes.setRoute(.file(body), for: "/f")
        try withServer { server in
            let client = try LoopbackHTTPClient(port: server.port)
            client.sendRequest("GET", "/f", extraHeaders: "Range: bytes=1000-1999\r\n")
            let partial = try #require(client.readResponse())
            #expect(partial.status == 206)
            #expect(partial.headers["Content-Range"] == "bytes 1000-1999/100000")
            #expect(partial.body == body.bytes(in: 1000..<2000))
            client.sendRequest("GET", "/f", extraHeaders: "Range: bytes=100000-\r\n")
            let unsatisfiable = try #require(client.readResponse())
            #expect(unsatisfiable.status == 416)
            #expect(unsatisfiable.body.isEmpty)
        }
    }

    @Test func keepsTheConnectionAliveAcrossRequests() throws {
        routes.setRoute(.file(body), for: "/f")
        try withServer { server in
            let client = try LoopbackHTTPClient(port: server.port)
            for _ in 0..<3 {
                client.sendRequest("GET", "/f")
                #expect(client.readResponse()?.body.count == 100_000)
            }
            #expect(server.acceptedConnectionCount == 1)
            #expect(routes.requests.count == 3)
        }
    }

    @Test func headAnswersWithoutABody() throws {
        routes.setRoute(.file(body), for: "/f")
        try withServer { server in
            let client = try LoopbackHTTPClient(port: server.port)
            client.sendRequest("HEAD", "/f")
            let head = try #require(client.readResponse(expectsBody: false))
            #expect(head.status == 200)
            #expect(head.headers["Content-Length"] == "100000")
            // Had a body followed the HEAD answer, this response would not parse.
            client.sendRequest("GET", "/missing")
            let missing = try #require(client.readResponse())
            #expect(missing.status == 404)
            #expect(missing.body == Array("not found\n".utf8))
        }
    }

    @Test func dropClosesTheSocketMidBody() throws {
        routes.setRoute(.file(body).faulting(.dropAfter(bytes: 12_345)), for: "/f")
        try withServer { server in
            let client = try LoopbackHTTPClient(port: server.port)
            client.sendRequest("GET", "/f")
            let response = try #require(client.readResponse())
            #expect(response.headers["Content-Length"] == "100000")
            #expect(response.endedEarly)
            #expect(response.body == body.bytes(in: 0..<12_345))
        }
    }

    @Test func extraBytesAreReallySentThenTheConnectionCloses() throws {
        routes.setRoute(.file(body).faulting(.extraBytes(count: 42)), for: "/f")
        try withServer { server in
            let client = try LoopbackHTTPClient(port: server.port)
            client.sendRequest("GET", "/f")
            let response = try #require(client.readResponse())
            #expect(response.body == body.allBytes)
            #expect(client.readToEnd() == Array(repeating: MockResponsePlan.extraByte, count: 42))
        }
    }

    @Test func throttledAndDelayedBodyArrivesWhole() throws {
        routes.setRoute(
            .file(.generated(seed: 3, count: 30_000)).delayed(by: .milliseconds(20)).throttled(
                toBytesPerSecond: 300_000),
            for: "/slow")
        try withServer { server in
            let client = try LoopbackHTTPClient(port: server.port)
            client.sendRequest("GET", "/slow")
            #expect(client.readResponse()?.body == MockBody.generated(seed: 3, count: 30_000).allBytes)
        }
    }

    @Test func stopClosesStalledConnectionsAndJoinsTheirThreads() throws {
        routes.setRoute(.file(body).faulting(.stallAfter(bytes: 10)), for: "/f")
        let server = LoopbackHTTPServer(serving: routes)
        try server.start()
        let client = try LoopbackHTTPClient(port: server.port)
        client.sendRequest("GET", "/f")
        let head = try #require(client.readHead())
        #expect(head.headers["Content-Length"] == "100000")
        #expect(client.readBytes(10) == body.bytes(in: 0..<10))
        server.stop()  // returns only once every thread has been joined
        #expect(client.readToEnd().isEmpty)
        #expect(server.port == 0)
        server.stop()
    }

    @Test func serverCanBeStartedAgainAfterStop() throws {
        routes.setRoute(.file(body), for: "/f")
        let server = LoopbackHTTPServer(serving: routes)
        try server.start()
        server.stop()
        try server.start()
        defer { server.stop() }
        let client = try LoopbackHTTPClient(port: server.port)
        client.sendRequest("GET", "/f")
        #expect(client.readResponse()?.status == 200)
    }

    @Test func malformedRequestGets400() throws {
        try withServer { server in
            let client = try LoopbackHTTPClient(port: server.port)
            client.sendRaw("NONSENSE\r\n\r\n")
            #expect(client.readResponse()?.status == 400)
        }
    }
}
