import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport
import Testing

/// What the in-memory transport delivers for each route feature and fault (manual mode, so
/// every expectation is checked after `runUntilIdle()` returned, on this thread).
@Suite("MockTransport transfers")
struct MockTransportTests {
    let server = MockServer()
    let body = MockBody.generated(seed: 5, count: 200_000)

    func run(
        _ request: TransferRequest, chunkSize: Int = 64 << 10, sink: any TransferSink = RecordingSink()
    ) -> (log: TransferLog, transport: MockTransport) {
        let transport = MockTransport(server: server, mode: .manual, chunkSize: chunkSize)
        let log = TransferLog(transport)
        _ = transport.start(request, sink: sink, events: log.handler)
        transport.runUntilIdle()
        return (log, transport)
    }

    func request(_ path: String, _ configure: (inout TransferRequest) -> Void = { _ in }) -> TransferRequest {
        var request = try! TransferRequest(url: "http://mock.test" + path)
        configure(&request)
        return request
    }

    @Test func plainDownloadWritesTheWholeBodyThenFlushesThenSucceeds() {
        server.setRoute(.file(body, entityTag: .fixed("\"a\"")), for: "/f")
        let sink = RecordingSink()
        let (log, transport) = run(request("/f"), sink: sink)
        #expect(sink.bytes == body.allBytes)
        #expect(sink.offsets == [0, 65536, 131_072, 196_608])
        #expect(sink.flushCount == 1)
        #expect(log.head?.status == 200)
        #expect(log.head?.entityTag == "\"a\"")
        #expect(log.head?.effectiveURL == "http://mock.test/f")
        #expect(log.summary == TransferSummary(head: log.head!, receivedBytes: 200_000, redirectCount: 0))
        #expect(log.progress.map(\.receivedBytes) == [65536, 131_072, 196_608, 200_000])
        #expect(log.progress.allSatisfy { $0.expectedBytes == 200_000 })
        #expect(log.events.first?.isHead == true)
        #expect(log.events.last?.isCompleted == true)
        #expect(log.completionCount == 1)
        #expect(transport.activeTransfers.isEmpty)
    }

    @Test func chunkSizeSetsTheWriteSize() {
        server.setRoute(.file(body), for: "/f")
        let sink = RecordingSink()
        _ = run(request("/f"), chunkSize: 150_000, sink: sink)
        #expect(sink.writeSizes == [150_000, 50_000])
    }

    @Test func resumeWritesAtTheRangeStart() {
        server.setRoute(.file(body, entityTag: .fixed("\"a\"")), for: "/f")
        let sink = RecordingSink()
        let (log, _) = run(
            request("/f") {
                $0.range = ByteRange(start: 150_000)
                $0.ifRange = .entityTag("\"a\"")
            }, sink: sink)
        #expect(log.head?.status == 206)
        #expect(log.head?.contentRange == ContentRange(first: 150_000, last: 199_999, completeLength: 200_000))
        #expect(sink.offsets == [150_000])
        #expect(sink.bytes == body.bytes(in: 150_000..<200_000))
        #expect(log.summary?.receivedBytes == 50000)
        #expect(server.requests.first?.headers["Range"] == "bytes=150000-")
        #expect(server.requests.first?.headers["If-Range"] == "\"a\"")
    }

    @Test func changedFileComesBackWholeAndIsNotWritten() {
        server.setRoute(.file(body, entityTag: .changesOnEveryRequest), for: "/f")
        let sink = RecordingSink()
        let (log, _) = run(
            request("/f") {
                $0.range = ByteRange(start: 10)
                $0.ifRange = .entityTag("\"0\"")
            }, sink: sink)
        #expect(log.head?.status == 200)
        #expect(log.error?.code == .rangeNotHonoured)
        #expect(log.error?.httpStatus == 200)
        #expect(sink.bytes.isEmpty)
    }

    @Test func serverIgnoringTheRangeEndsWithRangeNotHonoured() {
        server.setRoute(.file(body).faulting(.ignoreRange), for: "/f")
        let sink = RecordingSink()
        let (log, _) = run(request("/f") { $0.range = ByteRange(start: 10) }, sink: sink)
        #expect(log.error?.code == .rangeNotHonoured)
        #expect(sink.bytes.isEmpty)
        #expect(log.progress.isEmpty)
    }

    @Test func wrongContentRangeEndsWithRangeNotHonoured() {
        server.setRoute(.file(body).faulting(.wrongContentRange(shift: 1)), for: "/f")
        let (log, _) = run(request("/f") { $0.range = ByteRange(start: 10, end: 19) })
        #expect(log.head?.status == 206)
        #expect(log.error?.code == .rangeNotHonoured)
        #expect(log.error?.httpStatus == 206)
    }

    @Test func unsatisfiableRangeEndsWithHTTPStatus416() {
        server.setRoute(.file(body), for: "/f")
        let (log, _) = run(request("/f") { $0.range = ByteRange(start: 200_000) })
        #expect(log.error?.code == .httpStatus)
        #expect(log.error?.httpStatus == 416)
    }

    @Test func errorStatusReportsItsHeadAndWritesNothing() {
        server.setRoute(.status(503, retryAfter: "7"), for: "/busy")
        let sink = RecordingSink()
        let (log, _) = run(request("/busy"), sink: sink)
        #expect(log.head?.status == 503)
        #expect(log.head?.headers["Retry-After"] == "7")
        #expect(log.error?.code == .httpStatus)
        #expect(log.error?.httpStatus == 503)
        #expect(log.error?.failureReason.code == .httpStatus)
        #expect(sink.bytes.isEmpty)
        #expect(sink.flushCount == 0)
    }

    @Test func pathWithoutARouteAnswers404() {
        let (log, _) = run(request("/nothing/here"))
        #expect(log.head?.status == 404)
        #expect(log.error?.httpStatus == 404)
    }

    @Test func challengeIsReportedAsHeadThen401() {
        server.setRoute(
            .file(body).requiringAuthorization("Basic good", challenges: ["Basic realm=\"r\"", "Digest realm=\"r\""]),
            for: "/p")
        let (log, _) = run(request("/p"))
        #expect(log.head?.headers.values(for: "WWW-Authenticate") == ["Basic realm=\"r\"", "Digest realm=\"r\""])
        #expect(log.error?.httpStatus == 401)
        #expect(log.error?.failureReason.code == .authentication)
    }

    @Test func matchingCredentialsAreAccepted() {
        server.setRoute(.file(body).requiringAuthorization("Basic good"), for: "/p")
        let (log, _) = run(
            request("/p") { $0.credentials = RequestCredentials(authorization: "Basic good", allowPlainHTTP: true) })
        #expect(log.summary?.receivedBytes == 200_000)
        #expect(server.requests.first?.headers["Authorization"] == "Basic good")
    }

    @Test func credentialsOverPlainHTTPAreRefusedBeforeAnyRequest() {
        server.setRoute(.file(body), for: "/p")
        let (log, _) = run(request("/p") { $0.credentials = RequestCredentials(authorization: "Basic good") })
        #expect(log.events.count == 1)
        #expect(log.error?.code == .invalidRequest)
        #expect(server.requests.isEmpty)
    }

    @Test func credentialsOverHTTPSAreSent() {
        server.setRoute(.file(body), for: "/p")
        var request = try! TransferRequest(url: "https://mock.test/p")
        request.credentials = RequestCredentials(authorization: "Bearer t")
        let (log, _) = run(request)
        #expect(log.summary != nil)
        #expect(server.requests.first?.headers["Authorization"] == "Bearer t")
    }

    @Test func redirectsAreFollowedAndReportedAndTheirBodiesNotWritten() {
        server.setRoute(.redirect(301, to: "http://mock.test/b"), for: "/a")
        server.setRoute(.redirect(302, to: "c"), for: "/b")
        server.setRoute(.file(body), for: "/c")
        let sink = RecordingSink()
        let (log, _) = run(request("/a"), sink: sink)
        #expect(
            log.milestones.prefix(2) == [
                .redirected(Redirect(status: 301, from: "http://mock.test/a", to: "http://mock.test/b")),
                .redirected(Redirect(status: 302, from: "http://mock.test/b", to: "http://mock.test/c")),
            ])
        #expect(log.head?.effectiveURL == "http://mock.test/c")
        #expect(log.summary?.redirectCount == 2)
        #expect(sink.bytes == body.allBytes)
        #expect(server.requests.map(\.url) == ["http://mock.test/a", "http://mock.test/b", "http://mock.test/c"])
    }

    @Test func redirectBeyondTheLimitEndsWithTooManyRedirects() {
        server.setRoute(.redirect(to: "/a"), for: "/a")
        let (log, _) = run(request("/a") { $0.redirects = RedirectPolicy(maxHops: 3) })
        #expect(log.milestones.count == 4)
        #expect(log.error?.code == .tooManyRedirects)
        #expect(server.requests.count == 4)
    }

    @Test func zeroHopsRefusesTheFirstRedirect() {
        server.setRoute(.redirect(to: "/b"), for: "/a")
        let (log, _) = run(request("/a") { $0.redirects = RedirectPolicy(maxHops: 0) })
        #expect(log.events.count == 1)
        #expect(log.error?.code == .tooManyRedirects)
    }

    @Test func redirectWithoutLocationIsAProtocolViolation() {
        var route = MockRoute.redirect(to: "/b")
        route.headers.remove(name: "Location")
        server.setRoute(route, for: "/a")
        let (log, _) = run(request("/a"))
        #expect(log.error?.code == .protocolViolation)
    }

    @Test func downgradeFromHTTPSIsRefusedUnlessAllowed() {
        server.setRoute(.redirect(to: "http://mock.test/f"), for: "/s")
        server.setRoute(.file(body), for: "/f")
        let refused = run(try! TransferRequest(url: "https://mock.test/s")).log
        #expect(refused.error?.code == .insecureRedirect)
        #expect(server.requests.count == 1)
        var allowed = try! TransferRequest(url: "https://mock.test/s")
        allowed.redirects.allowsHTTPSToHTTP = true
        #expect(run(allowed).log.summary?.redirectCount == 1)
    }

    @Test func eachHopGetsTheHeadersToSendToIt() {
        server.setRoute(.redirect(to: "http://other.test/b"), for: "/a")
        server.setRoute(.redirect(to: "http://mock.test/c"), for: "/b")
        server.setRoute(.file(body), for: "/c")
        let original = request("/a") {
            $0.credentials = RequestCredentials(authorization: "Basic x", allowPlainHTTP: true)
            $0.headers = ["Cookie": "s=1", "X-Trace": "t"]
            $0.range = ByteRange(start: 5)
        }
        _ = run(original)
        for sent in server.requests {
            #expect(sent.headers == original.headersToSend(to: try! DownloadURL(sent.url)), "\(sent)")
        }
        #expect(server.requests[1].headers["Authorization"] == nil)
        #expect(server.requests[1].headers["Cookie"] == nil)
        #expect(server.requests[1].headers["X-Trace"] == "t")
        #expect(server.requests[2].headers["Authorization"] == "Basic x")
    }

    @Test func headRequestReportsTheHeadAndWritesNothing() {
        server.setRoute(.file(body, entityTag: .fixed("\"h\"")), for: "/f")
        let sink = RecordingSink()
        let (log, _) = run(request("/f") { $0.method = .head }, sink: sink)
        #expect(log.head?.contentLength == 200_000)
        #expect(log.summary?.receivedBytes == 0)
        #expect(sink.bytes.isEmpty)
        #expect(server.requests.first?.method == "HEAD")
    }

    @Test func droppedConnectionEndsAsANetworkFailureAfterTheBytesReceived() {
        server.setRoute(.file(body).faulting(.dropAfter(bytes: 70_000)), for: "/f")
        let sink = RecordingSink()
        let (log, _) = run(request("/f"), sink: sink)
        #expect(log.head?.contentLength == 200_000)
        #expect(sink.bytes == body.bytes(in: 0..<70_000))
        #expect(log.error?.code == .connectionClosed)
        #expect(log.error?.failureReason.code == .network)
    }

    @Test func bytesBeyondContentLengthEndWithLengthMismatchAndAreNotWritten() {
        server.setRoute(.file(body).faulting(.extraBytes(count: 10)), for: "/f")
        let sink = RecordingSink()
        let (log, _) = run(request("/f"), chunkSize: 100_000, sink: sink)
        #expect(sink.bytes == body.allBytes)
        #expect(log.error?.code == .lengthMismatch)
        #expect(sink.flushCount == 0)
    }

    @Test func extraBytesInTheirOwnChunkAreSeenToo() {
        server.setRoute(.file(body).faulting(.extraBytes(count: 10)), for: "/f")
        let sink = RecordingSink()
        let (log, _) = run(request("/f"), chunkSize: 100_000, sink: sink)
        #expect(log.progress.last?.receivedBytes == 200_000)
        #expect(log.error?.code == .lengthMismatch)
    }

    @Test func announcedLengthLongerThanTheBodyWaitsThenTooSlow() {
        server.setRoute(.file(body).adding(header: "Content-Length", value: "300000"), for: "/f")
        let (log, transport) = run(request("/f"))
        #expect(log.error?.code == .tooSlow)
        #expect(transport.now == MockInstant(offset: .seconds(60)))
    }

    @Test func sinkErrorEndsWithWriteFailedAndItsErrno() {
        server.setRoute(.file(body), for: "/f")
        let (log, _) = run(request("/f"), sink: RecordingSink(failingWith: SinkWriteError(errno: 28, message: "full")))
        #expect(log.error?.code == .writeFailed)
        #expect(log.error?.errno == 28)
        #expect(log.error?.failureReason.code == .diskFull)
        #expect(log.progress.isEmpty)
    }

    @Test func flushErrorEndsWithWriteFailed() {
        server.setRoute(.file(body), for: "/f")
        let (log, _) = run(request("/f"), sink: FailingFlushSink())
        #expect(log.error?.code == .writeFailed)
        #expect(log.error?.errno == 5)
    }

    @Test func emptyBodySucceedsWithoutWrites() {
        server.setRoute(.file(.empty), for: "/e")
        let sink = RecordingSink()
        let (log, _) = run(request("/e"), sink: sink)
        #expect(log.summary?.receivedBytes == 0)
        #expect(sink.writeSizes.isEmpty)
        #expect(sink.flushCount == 1)
    }

    @Test func latencyDelaysTheHeadInVirtualTime() {
        server.setRoute(.file(body).delayed(by: .seconds(2)), for: "/f")
        let (log, transport) = run(request("/f"))
        #expect(log.time(of: \.isHead) == MockInstant(offset: .seconds(2)))
        #expect(transport.now == MockInstant(offset: .seconds(2)))
    }

    @Test func throughputLimitSpacesTheChunks() {
        server.setRoute(.file(.generated(seed: 1, count: 250_000)).throttled(toBytesPerSecond: 100_000), for: "/f")
        let (log, _) = run(request("/f"))
        let times = log.all.filter { if case .progress = $0.event { true } else { false } }.map(\.time.offset)
        #expect(
            times == [.microseconds(655_360), .microseconds(1_310_720), .microseconds(1_966_080), .milliseconds(2500)])
        #expect(log.time(of: \.isCompleted) == MockInstant(offset: .seconds(2.5)))
    }

    @Test func requestCapLimitsBelowTheRoute() {
        server.setRoute(.file(.generated(seed: 1, count: 100_000)).throttled(toBytesPerSecond: 1_000_000), for: "/f")
        let (log, _) = run(request("/f") { $0.maxReceiveBytesPerSecond = 50000 })
        #expect(log.time(of: \.isCompleted) == MockInstant(offset: .seconds(2)))
    }

    @Test func latencyLongerThanTheLowSpeedWindowIsTooSlow() {
        server.setRoute(.file(body).delayed(by: .seconds(90)), for: "/f")
        let (log, transport) = run(request("/f"))
        #expect(log.events.count == 1)
        #expect(log.error?.code == .tooSlow)
        #expect(transport.now == MockInstant(offset: .seconds(60)))
    }

    @Test func throughputBelowTheLowSpeedLimitIsTooSlow() {
        server.setRoute(.file(body).throttled(toBytesPerSecond: 1000), for: "/f")
        let (log, _) = run(
            request("/f") {
                $0.timeouts.lowSpeed = TransferTimeouts.LowSpeedLimit(bytesPerSecond: 2000, duration: .seconds(10))
            }, chunkSize: 1000)
        #expect(log.error?.code == .tooSlow)
        #expect(log.progress.last?.receivedBytes == 10_000)
        #expect(log.time(of: \.isCompleted) == MockInstant(offset: .seconds(10)))
    }

    @Test func stallWithoutLowSpeedRuleWaitsUntilCancelled() {
        server.setRoute(.file(body).faulting(.stallAfter(bytes: 1000)), for: "/f")
        let transport = MockTransport(server: server, mode: .manual)
        let log = TransferLog(transport)
        var request = request("/f")
        request.timeouts.lowSpeed = nil
        let id = transport.start(request, sink: RecordingSink(), events: log.handler)
        transport.runUntilIdle()
        #expect(log.progress.map(\.receivedBytes) == [1000])
        #expect(log.result == nil)
        #expect(transport.activeTransfers == [id])
        #expect(transport.nextStepTime == nil)
        transport.cancel(id)
        transport.runUntilIdle()
        #expect(log.error?.code == .cancelled)
    }

    @Test func stallIsTooSlowAfterTheLowSpeedWindow() {
        server.setRoute(.file(body).faulting(.stallAfter(bytes: 1000)), for: "/f")
        let (log, _) = run(request("/f"))
        #expect(log.error?.code == .tooSlow)
        #expect(log.time(of: \.isCompleted) == MockInstant(offset: .seconds(60)))
    }

    @Test func automaticModeCompletesWithoutHelp() async throws {
        server.setRoute(.file(body).delayed(by: .seconds(3600)).throttled(toBytesPerSecond: 1), for: "/f")
        let transport = MockTransport(server: server)
        let sink = MemorySink()
        var request = request("/f")
        request.timeouts.lowSpeed = nil
        let summary = try await transport.download(request, to: sink)
        #expect(summary.receivedBytes == 200_000)
        #expect(sink.bytes == body.allBytes)
        #expect(transport.now == MockInstant(offset: .seconds(3600 + 200_000)))
    }

    @Test func automaticModeDownloadThrowsTheTransportError() async {
        let transport = MockTransport(server: server)
        await #expect(throws: TransportError.self) {
            _ = try await transport.download(try! TransferRequest(url: "http://mock.test/none"), to: DiscardingSink())
        }
    }
}
