import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport

/// The scenarios of the Transport conformance suite, each with the trace every backend must
/// produce, written out. Run them on your backend with ``ConformanceRunner`` and check each
/// trace with ``expectConformance(_:to:sourceLocation:)``.
public enum ConformanceScenarios {
    /// A 300 000-byte file: several chunks on every backend.
    static let file = MockBody.generated(seed: 0xC0FFEE, count: 300_000)
    /// A 4 MiB file sent at 4 MiB/s, for actions taken part way through the body.
    static let slowFile = MockBody.generated(seed: 0xBEEF, count: 4 << 20)
    static let slowRate: Int64 = 4 << 20
    static let lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"
    static let basicCredentials = "Basic dXNlcjpwYXNz"

    static func request(
        _ url: String, method: HTTPMethod = .get, range: ByteRange? = nil, ifRange: ResumeValidator? = nil,
        credentials: RequestCredentials? = nil, redirects: RedirectPolicy = RedirectPolicy(),
        lowSpeed: TransferTimeouts.LowSpeedLimit? = TransferTimeouts().lowSpeed
    ) -> TransferRequest {
        var request = try! TransferRequest(url: url, method: method)
        request.timeouts.lowSpeed = lowSpeed
        request.range = range
        request.ifRange = ifRange
        request.credentials = credentials
        request.redirects = redirects
        return request
    }

    /// Every scenario; ``ConformanceScenario/requiresTLS`` marks those that need an https origin.
    public static let all: [ConformanceScenario] = [
        ConformanceScenario(
            "plain 200",
            setup: { server, _ in server.setRoute(.file(file, entityTag: .fixed("\"v1\"")), for: "/files/plain.bin") },
            request: { request($0.primary + "/files/plain.bin") },
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=300000 etag=\"v1\"",
                    "completed received=300000 redirects=0",
                ],
                requests: ["GET BASE/files/plain.bin"],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "206 resume with a matching If-Range entity tag",
            setup: { server, _ in server.setRoute(.file(file, entityTag: .fixed("\"v1\"")), for: "/files/resume.bin") },
            request: {
                request(
                    $0.primary + "/files/resume.bin", range: ByteRange(start: 100_000), ifRange: .entityTag("\"v1\""))
            },
            expected: ConformanceExpectation(
                events: [
                    "head 206 length=200000 range=bytes 100000-299999/300000 etag=\"v1\"",
                    "completed received=200000 redirects=0",
                ],
                requests: ["GET BASE/files/resume.bin range=bytes=100000- if-range=\"v1\""],
                sink: .bytes(of: file, range: 100_000..<300_000))
        ),
        ConformanceScenario(
            "206 resume with a matching If-Range date",
            setup: { server, _ in server.setRoute(.file(file, lastModified: lastModified), for: "/files/dated.bin") },
            request: {
                request(
                    $0.primary + "/files/dated.bin", range: ByteRange(start: 250_000, end: 259_999),
                    ifRange: .lastModified(lastModified))
            },
            expected: ConformanceExpectation(
                events: [
                    "head 206 length=10000 range=bytes 250000-259999/300000",
                    "completed received=10000 redirects=0",
                ],
                requests: ["GET BASE/files/dated.bin range=bytes=250000-259999 if-range=\(lastModified)"],
                sink: .bytes(of: file, range: 250_000..<260_000))
        ),
        ConformanceScenario(
            "If-Range mismatch answered 200 is not honoured and writes nothing",
            setup: { server, _ in server.setRoute(.file(file, entityTag: .fixed("\"v2\"")), for: "/files/changed.bin")
            },
            request: {
                request(
                    $0.primary + "/files/changed.bin", range: ByteRange(start: 100_000), ifRange: .entityTag("\"v1\""))
            },
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=300000 etag=\"v2\"",
                    "failed range not honoured status=200",
                ],
                requests: ["GET BASE/files/changed.bin range=bytes=100000- if-range=\"v1\""],
                sink: .nothing)
        ),
        ConformanceScenario(
            "206 of another entity tag than If-Range is not honoured and writes nothing",
            setup: { server, _ in
                server.setRoute(
                    .file(file, entityTag: .fixed("\"v2\"")).faulting(.ignoreIfRange), for: "/files/spliced.bin")
            },
            request: {
                request(
                    $0.primary + "/files/spliced.bin", range: ByteRange(start: 100_000), ifRange: .entityTag("\"v1\""))
            },
            expected: ConformanceExpectation(
                events: [
                    "head 206 length=200000 range=bytes 100000-299999/300000 etag=\"v2\"",
                    "failed range not honoured status=206",
                ],
                requests: ["GET BASE/files/spliced.bin range=bytes=100000- if-range=\"v1\""],
                sink: .nothing)
        ),
        ConformanceScenario(
            "206 of another Last-Modified than If-Range is not honoured and writes nothing",
            setup: { server, _ in
                server.setRoute(
                    .file(file, lastModified: "Thu, 22 Oct 2015 07:28:00 GMT").faulting(.ignoreIfRange),
                    for: "/files/spliced-dated.bin")
            },
            request: {
                request(
                    $0.primary + "/files/spliced-dated.bin", range: ByteRange(start: 100_000),
                    ifRange: .lastModified(lastModified))
            },
            expected: ConformanceExpectation(
                events: [
                    "head 206 length=200000 range=bytes 100000-299999/300000",
                    "failed range not honoured status=206",
                ],
                requests: ["GET BASE/files/spliced-dated.bin range=bytes=100000- if-range=\(lastModified)"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "206 of a file of another complete length is not honoured and writes nothing",
            setup: { server, _ in
                server.setRoute(.file(file, entityTag: .fixed("\"v1\"")), for: "/files/resized.bin")
            },
            request: {
                var resumed = request(
                    $0.primary + "/files/resized.bin", range: ByteRange(start: 100_000), ifRange: .entityTag("\"v1\""))
                resumed.rangeCompleteLength = 400_000
                return resumed
            },
            expected: ConformanceExpectation(
                events: [
                    "head 206 length=200000 range=bytes 100000-299999/300000 etag=\"v1\"",
                    "failed range not honoured status=206",
                ],
                requests: ["GET BASE/files/resized.bin range=bytes=100000- if-range=\"v1\""],
                sink: .nothing)
        ),
        ConformanceScenario(
            "server answering 200 instead of 206",
            setup: { server, _ in
                server.setRoute(
                    .file(file, entityTag: .fixed("\"v1\"")).faulting(.ignoreRange), for: "/files/ignores-range.bin")
            },
            request: {
                request(
                    $0.primary + "/files/ignores-range.bin", range: ByteRange(start: 100_000),
                    ifRange: .entityTag("\"v1\""))
            },
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=300000 etag=\"v1\"",
                    "failed range not honoured status=200",
                ],
                requests: ["GET BASE/files/ignores-range.bin range=bytes=100000- if-range=\"v1\""],
                sink: .nothing)
        ),
        ConformanceScenario(
            "206 with a Content-Range at another offset",
            setup: { server, _ in
                server.setRoute(.file(file).faulting(.wrongContentRange(shift: -100_000)), for: "/files/shifted.bin")
            },
            request: { request($0.primary + "/files/shifted.bin", range: ByteRange(start: 100_000)) },
            expected: ConformanceExpectation(
                events: [
                    "head 206 length=200000 range=bytes 0-199999/300000",
                    "failed range not honoured status=206",
                ],
                requests: ["GET BASE/files/shifted.bin range=bytes=100000-"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "unsatisfiable range answered 416",
            setup: { server, _ in server.setRoute(.file(file, entityTag: .fixed("\"v1\"")), for: "/files/short.bin") },
            request: { request($0.primary + "/files/short.bin", range: ByteRange(start: 300_000)) },
            expected: ConformanceExpectation(
                events: [
                    "head 416 length=0 range=bytes */300000 etag=\"v1\"",
                    "failed HTTP error status status=416",
                ],
                requests: ["GET BASE/files/short.bin range=bytes=300000-"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "404 for a path without a route",
            setup: { _, _ in },
            request: { request($0.primary + "/missing.bin") },
            expected: ConformanceExpectation(
                events: [
                    "head 404 length=10",
                    "failed HTTP error status status=404",
                ],
                requests: ["GET BASE/missing.bin"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "503 with Retry-After",
            setup: { server, _ in server.setRoute(.status(503, retryAfter: "120"), for: "/busy.bin") },
            request: { request($0.primary + "/busy.bin") },
            expected: ConformanceExpectation(
                events: [
                    "head 503 length=11 retry-after=120",
                    "failed HTTP error status status=503",
                ],
                requests: ["GET BASE/busy.bin"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "401 with two challenges",
            setup: { server, _ in
                server.setRoute(
                    .file(file).requiringAuthorization(
                        basicCredentials,
                        challenges: [
                            "Basic realm=\"peregrine\"", "Digest realm=\"peregrine\", nonce=\"n1\", qop=\"auth\"",
                        ]),
                    for: "/private/file.bin")
            },
            request: { request($0.primary + "/private/file.bin") },
            expected: ConformanceExpectation(
                events: [
                    "head 401 length=13 www-authenticate=[Basic realm=\"peregrine\" | Digest realm=\"peregrine\", nonce=\"n1\", qop=\"auth\"]",
                    "failed HTTP error status status=401",
                ],
                requests: ["GET BASE/private/file.bin"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "credentials accepted",
            setup: { server, _ in
                server.setRoute(.file(file).requiringAuthorization(basicCredentials), for: "/private/file.bin")
            },
            request: {
                request(
                    $0.primary + "/private/file.bin",
                    credentials: RequestCredentials(authorization: basicCredentials, allowPlainHTTP: true))
            },
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=300000",
                    "completed received=300000 redirects=0",
                ],
                requests: ["GET BASE/private/file.bin authorization=\(basicCredentials)"],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "redirect chain of 3",
            setup: { server, bases in
                server.setRoute(.redirect(301, to: bases.primary + "/chain/2"), for: "/chain/1")
                server.setRoute(.redirect(302, to: "/chain/3"), for: "/chain/2")
                server.setRoute(.redirect(307, to: bases.primary + "/files/target.bin"), for: "/chain/3")
                server.setRoute(.file(file, entityTag: .fixed("\"t\"")), for: "/files/target.bin")
            },
            request: { request($0.primary + "/chain/1") },
            expected: ConformanceExpectation(
                events: [
                    "redirected 301 BASE/chain/1 -> BASE/chain/2",
                    "redirected 302 BASE/chain/2 -> BASE/chain/3",
                    "redirected 307 BASE/chain/3 -> BASE/files/target.bin",
                    "head 200 length=300000 etag=\"t\"",
                    "completed received=300000 redirects=3",
                ],
                requests: [
                    "GET BASE/chain/1", "GET BASE/chain/2", "GET BASE/chain/3", "GET BASE/files/target.bin",
                ],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "redirect limit exceeded",
            setup: { server, bases in
                server.setRoute(.redirect(302, to: bases.primary + "/loop/2"), for: "/loop/1")
                server.setRoute(.redirect(302, to: bases.primary + "/loop/3"), for: "/loop/2")
                server.setRoute(.redirect(302, to: bases.primary + "/loop/4"), for: "/loop/3")
                server.setRoute(.file(file), for: "/loop/4")
            },
            request: { request($0.primary + "/loop/1", redirects: RedirectPolicy(maxHops: 2)) },
            expected: ConformanceExpectation(
                events: [
                    "redirected 302 BASE/loop/1 -> BASE/loop/2",
                    "redirected 302 BASE/loop/2 -> BASE/loop/3",
                    "failed too many redirects",
                ],
                requests: ["GET BASE/loop/1", "GET BASE/loop/2", "GET BASE/loop/3"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "relative Location resolved against the URL that answered",
            setup: { server, _ in
                server.setRoute(.redirect(303, to: "../landing/file.bin?v=2"), for: "/relative/from/here")
                server.setRoute(.file(file), for: "/relative/landing/file.bin")
            },
            request: { request($0.primary + "/relative/from/here") },
            expected: ConformanceExpectation(
                events: [
                    "redirected 303 BASE/relative/from/here -> BASE/relative/landing/file.bin?v=2",
                    "head 200 length=300000",
                    "completed received=300000 redirects=1",
                ],
                requests: ["GET BASE/relative/from/here", "GET BASE/relative/landing/file.bin?v=2"],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "https to http redirect refused",
            requiresTLS: true,
            setup: { server, bases in
                server.setRoute(.redirect(302, to: bases.primary + "/files/plain.bin"), for: "/secure/start")
                server.setRoute(.file(file), for: "/files/plain.bin")
            },
            request: { request($0.secure! + "/secure/start") },
            expected: ConformanceExpectation(
                events: ["failed insecure redirect"],
                requests: ["GET SECURE/secure/start"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "connection dropped after 100000 bytes",
            setup: { server, _ in
                server.setRoute(.file(file).faulting(.dropAfter(bytes: 100_000)), for: "/files/dropped.bin")
            },
            request: { request($0.primary + "/files/dropped.bin") },
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=300000",
                    "failed connection closed early",
                ],
                requests: ["GET BASE/files/dropped.bin"],
                sink: .bytes(of: file, range: 0..<100_000))
        ),
        ConformanceScenario(
            "bytes beyond Content-Length",
            setup: { server, _ in
                server.setRoute(.file(file).faulting(.extraBytes(count: 100)), for: "/files/overlong.bin")
            },
            request: { request($0.primary + "/files/overlong.bin") },
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=300000",
                    "failed length mismatch",
                ],
                requests: ["GET BASE/files/overlong.bin"],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "HEAD",
            setup: { server, _ in
                server.setRoute(
                    .file(file, entityTag: .fixed("\"v1\""), lastModified: lastModified), for: "/files/head.bin")
            },
            request: { request($0.primary + "/files/head.bin", method: .head) },
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=300000 etag=\"v1\"",
                    "completed received=0 redirects=0",
                ],
                requests: ["HEAD BASE/files/head.bin"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "credentials over plain http refused before any request",
            setup: { server, _ in server.setRoute(.file(file), for: "/private/file.bin") },
            request: {
                request(
                    $0.primary + "/private/file.bin", credentials: RequestCredentials(authorization: basicCredentials))
            },
            expected: ConformanceExpectation(
                events: ["failed invalid request"],
                requests: [],
                sink: .nothing)
        ),
        ConformanceScenario(
            "credentials not forwarded to another origin",
            setup: { server, bases in
                server.setRoute(.redirect(302, to: bases.other + "/public/landing.bin"), for: "/private/start")
                server.setRoute(.file(file), for: "/public/landing.bin")
            },
            request: {
                request(
                    $0.primary + "/private/start",
                    credentials: RequestCredentials(authorization: basicCredentials, allowPlainHTTP: true))
            },
            expected: ConformanceExpectation(
                events: [
                    "redirected 302 BASE/private/start -> OTHER/public/landing.bin",
                    "head 200 length=300000",
                    "completed received=300000 redirects=1",
                ],
                requests: [
                    "GET BASE/private/start authorization=\(basicCredentials)",
                    "GET OTHER/public/landing.bin",
                ],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "credentials kept on a same-origin redirect",
            setup: { server, _ in
                server.setRoute(.redirect(307, to: "/private/file.bin"), for: "/private/start")
                server.setRoute(.file(file).requiringAuthorization(basicCredentials), for: "/private/file.bin")
            },
            request: {
                request(
                    $0.primary + "/private/start",
                    credentials: RequestCredentials(authorization: basicCredentials, allowPlainHTTP: true))
            },
            expected: ConformanceExpectation(
                events: [
                    "redirected 307 BASE/private/start -> BASE/private/file.bin",
                    "head 200 length=300000",
                    "completed received=300000 redirects=1",
                ],
                requests: [
                    "GET BASE/private/start authorization=\(basicCredentials)",
                    "GET BASE/private/file.bin authorization=\(basicCredentials)",
                ],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "cancel from the event handler at 40 %",
            setup: { server, _ in
                server.setRoute(.file(slowFile).throttled(toBytesPerSecond: slowRate), for: "/files/slow.bin")
            },
            request: { request($0.primary + "/files/slow.bin") },
            action: .cancel(atBytes: slowFile.count * 4 / 10),
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=4194304",
                    "failed cancelled",
                ],
                requests: ["GET BASE/files/slow.bin"],
                sink: .prefix(of: slowFile, start: 0, atLeast: slowFile.count * 4 / 10, below: slowFile.count))
        ),
        ConformanceScenario(
            "pause from the event handler, then resume",
            setup: { server, _ in
                server.setRoute(.file(slowFile).throttled(toBytesPerSecond: slowRate), for: "/files/slow.bin")
            },
            request: { request($0.primary + "/files/slow.bin") },
            action: .pauseAndResume(atBytes: slowFile.count * 3 / 10),
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=4194304",
                    "completed received=4194304 redirects=0",
                ],
                requests: ["GET BASE/files/slow.bin"],
                sink: .bytes(of: slowFile, range: 0..<slowFile.count))
        ),
        ConformanceScenario(
            "held back by a speed limiter until its limit is lifted",
            setup: { server, _ in server.setRoute(.file(file, entityTag: .fixed("\"v1\"")), for: "/files/limited.bin")
            },
            request: { request($0.primary + "/files/limited.bin", lowSpeed: nil) },
            action: .frozenLimiter(rechecks: 3),
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=300000 etag=\"v1\"",
                    "completed received=300000 redirects=0",
                ],
                requests: ["GET BASE/files/limited.bin"],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "error status to a range request is an HTTP status error, not a range error",
            setup: { _, _ in },
            request: { request($0.primary + "/missing.bin", range: ByteRange(start: 100)) },
            expected: ConformanceExpectation(
                events: [
                    "head 404 length=10",
                    "failed HTTP error status status=404",
                ],
                requests: ["GET BASE/missing.bin range=bytes=100-"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "empty body",
            setup: { server, _ in server.setRoute(.file(.empty, entityTag: .fixed("\"0\"")), for: "/files/empty.bin") },
            request: { request($0.primary + "/files/empty.bin") },
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=0 etag=\"0\"",
                    "completed received=0 redirects=0",
                ],
                requests: ["GET BASE/files/empty.bin"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "redirect without Location",
            setup: { server, _ in
                var route = MockRoute.redirect(302, to: "/nowhere")
                route.headers.remove(name: "Location")
                server.setRoute(route, for: "/lost")
            },
            request: { request($0.primary + "/lost") },
            expected: ConformanceExpectation(
                events: ["failed protocol violation"],
                requests: ["GET BASE/lost"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "redirect to a scheme that is not downloaded",
            setup: { server, _ in server.setRoute(.redirect(301, to: "ftp://files.example/a.bin"), for: "/to-ftp") },
            request: { request($0.primary + "/to-ftp") },
            expected: ConformanceExpectation(
                events: ["failed invalid redirect"],
                requests: ["GET BASE/to-ftp"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "stalled server is too slow",
            setup: { server, _ in
                server.setRoute(.file(file).faulting(.stallAfter(bytes: 10_000)), for: "/files/stalled.bin")
            },
            request: {
                request(
                    $0.primary + "/files/stalled.bin",
                    lowSpeed: TransferTimeouts.LowSpeedLimit(bytesPerSecond: 1000, duration: .seconds(1)))
            },
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=300000",
                    "failed too slow",
                ],
                requests: ["GET BASE/files/stalled.bin"],
                sink: .bytes(of: file, range: 0..<10_000))
        ),
        ConformanceScenario(
            "sink write failure carries the errno",
            setup: { server, _ in server.setRoute(.file(file), for: "/files/plain.bin") },
            request: { request($0.primary + "/files/plain.bin") },
            sink: .failing(afterBytes: 100_000, errno: 28),
            expected: ConformanceExpectation(
                events: [
                    "head 200 length=300000",
                    "failed write failed errno=28",
                ],
                requests: ["GET BASE/files/plain.bin"],
                sink: .bytes(of: file, range: 0..<100_000))
        ),
    ]
}
