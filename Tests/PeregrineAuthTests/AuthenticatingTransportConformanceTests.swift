import PeregrineAuth
import PeregrineCore
import PeregrineCurlTransport
import PeregrineMockTransport
import PeregrineTransport
import TestSupport
import Testing

/// The decorator keeps the Transport rules: conformance scenarios (the suite's runner and trace
/// format) on ``AuthenticatingTransport`` over the in-memory transport and over libcurl against
/// the loopback server, challenges included — the libcurl runs check the exact Digest header
/// that crossed a real socket.
@Suite("AuthenticatingTransport conformance")
struct AuthenticatingTransportConformanceTests {
    @Test("over the mock transport", arguments: AuthConformanceScenarios.all)
    func decoratedMockTransportProducesTheExpectedTrace(_ scenario: ConformanceScenario) async throws {
        let server = MockServer()
        let transport = try AuthConformanceScenarios.decorate(MockTransport(server: server), bases: .mock)
        let trace = await ConformanceRunner.run(scenario, on: transport, routes: server, bases: .mock)
        expectConformance(trace, to: scenario)
    }

    @Test("over libcurl and the loopback server", arguments: AuthConformanceScenarios.all)
    func decoratedCurlTransportProducesTheExpectedTrace(_ scenario: ConformanceScenario) async throws {
        let curl = CurlTransport()
        defer { curl.shutdown() }
        let trace = try await ConformanceRunner.withLoopbackOrigins { routes, bases in
            let transport = try AuthConformanceScenarios.decorate(curl, bases: bases)
            return await ConformanceRunner.run(scenario, on: transport, routes: routes, bases: bases)
        }
        expectConformance(trace, to: scenario)
    }
}

/// Scenarios for the decorator, with the traces every backend must produce.
enum AuthConformanceScenarios {
    static let file = MockBody.generated(seed: 0xA7_7E57, count: 300_000)
    static let slowFile = MockBody.generated(seed: 0xBEEF, count: 4 << 20)
    static let slowRate: Int64 = 4 << 20
    static let credential = Credential(user: "user", password: "pass")
    static let basic = "Basic dXNlcjpwYXNz"
    static let digestChallenge = #"Digest realm="peregrine", nonce="n1", algorithm=SHA-256, qop="auth""#
    static var digest: String {
        try! MockAuthFixture.digestHeader(
            digestChallenge, credential: credential, uri: "/private/digest.bin", nonceCount: 1, clientNonce: "c1")
    }

    /// The decorator as every scenario runs it: `user:pass` stored for the primary origin,
    /// plain http allowed there, client nonces `c1`, `c2`, ….
    static func decorate(_ transport: any Transport, bases: ConformanceBases) throws -> AuthenticatingTransport {
        let primary = try DownloadURL(bases.primary)
        let store = CredentialStore([ProtectionSpace(url: primary): credential])
        return AuthenticatingTransport(
            wrapping: transport, credentials: store,
            configuration: .init(
                plainHTTPHosts: [primary.host], clientNonces: .sequence((1...9).map { "c\($0)" })))
    }

    static func request(_ url: String) -> TransferRequest {
        try! TransferRequest(url: url)
    }

    static let all: [ConformanceScenario] = [
        ConformanceScenario(
            "an open file passes through unchanged",
            setup: { server, _ in server.setRoute(.file(file, entityTag: .fixed("\"v1\"")), for: "/files/plain.bin") },
            request: { request($0.primary + "/files/plain.bin") },
            expected: ConformanceExpectation(
                events: ["head 200 length=300000 etag=\"v1\"", "completed received=300000 redirects=0"],
                requests: ["GET BASE/files/plain.bin"],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "a Basic challenge is answered and its 401 hidden",
            setup: { server, _ in
                server.setRoute(
                    .file(file).requiringAuthorization(basic, challenges: [#"Basic realm="peregrine""#]),
                    for: "/private/basic.bin")
            },
            request: { request($0.primary + "/private/basic.bin") },
            expected: ConformanceExpectation(
                events: ["head 200 length=300000", "completed received=300000 redirects=0"],
                requests: ["GET BASE/private/basic.bin", "GET BASE/private/basic.bin authorization=\(basic)"],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "the strongest challenge is answered with the exact Digest header",
            setup: { server, _ in
                server.setRoute(
                    .file(file).requiringAuthorization(
                        digest, challenges: [#"Basic realm="peregrine""#, digestChallenge]),
                    for: "/private/digest.bin")
            },
            request: { request($0.primary + "/private/digest.bin") },
            expected: ConformanceExpectation(
                events: ["head 200 length=300000", "completed received=300000 redirects=0"],
                requests: ["GET BASE/private/digest.bin", "GET BASE/private/digest.bin authorization=\(digest)"],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "a rejected credential ends with the final 401 after one retry",
            setup: { server, _ in
                server.setRoute(
                    .file(file).requiringAuthorization("Basic other", challenges: [#"Basic realm="peregrine""#]),
                    for: "/private/wrong.bin")
            },
            request: { request($0.primary + "/private/wrong.bin") },
            expected: ConformanceExpectation(
                events: [
                    "head 401 length=13 www-authenticate=[Basic realm=\"peregrine\"]",
                    "failed HTTP error status status=401",
                ],
                requests: ["GET BASE/private/wrong.bin", "GET BASE/private/wrong.bin authorization=\(basic)"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "a challenge from another origin after a redirect is not answered",
            setup: { server, bases in
                server.setRoute(.redirect(302, to: bases.other + "/private/elsewhere.bin"), for: "/go")
                server.setRoute(
                    .file(file).requiringAuthorization(basic, challenges: [#"Basic realm="other""#]),
                    for: "/private/elsewhere.bin")
            },
            request: { request($0.primary + "/go") },
            expected: ConformanceExpectation(
                events: [
                    "redirected 302 BASE/go -> OTHER/private/elsewhere.bin",
                    "head 401 length=13 www-authenticate=[Basic realm=\"other\"]",
                    "failed HTTP error status status=401",
                ],
                requests: ["GET BASE/go", "GET OTHER/private/elsewhere.bin"],
                sink: .nothing)
        ),
        ConformanceScenario(
            "credentials answered to a challenge are dropped on a redirect to another origin",
            setup: { server, bases in
                server.setRoute(
                    .redirect(302, to: bases.other + "/public/moved.bin").requiringAuthorization(
                        basic, challenges: [#"Basic realm="peregrine""#]),
                    for: "/private/moved")
                server.setRoute(.file(file), for: "/public/moved.bin")
            },
            request: { request($0.primary + "/private/moved") },
            expected: ConformanceExpectation(
                events: [
                    "redirected 302 BASE/private/moved -> OTHER/public/moved.bin",
                    "head 200 length=300000",
                    "completed received=300000 redirects=1",
                ],
                requests: [
                    "GET BASE/private/moved", "GET BASE/private/moved authorization=\(basic)",
                    "GET OTHER/public/moved.bin",
                ],
                sink: .bytes(of: file, range: 0..<300_000))
        ),
        ConformanceScenario(
            "cancel from the event handler after a challenge",
            setup: { server, _ in
                server.setRoute(
                    .file(slowFile).throttled(toBytesPerSecond: slowRate).requiringAuthorization(
                        basic, challenges: [#"Basic realm="peregrine""#]),
                    for: "/private/slow.bin")
            },
            request: { request($0.primary + "/private/slow.bin") },
            action: .cancel(atBytes: slowFile.count * 4 / 10),
            expected: ConformanceExpectation(
                events: ["head 200 length=4194304", "failed cancelled"],
                requests: ["GET BASE/private/slow.bin", "GET BASE/private/slow.bin authorization=\(basic)"],
                sink: .prefix(of: slowFile, start: 0, atLeast: slowFile.count * 4 / 10, below: slowFile.count))
        ),
        ConformanceScenario(
            "pause from the event handler after a challenge, then resume",
            setup: { server, _ in
                server.setRoute(
                    .file(slowFile).throttled(toBytesPerSecond: slowRate).requiringAuthorization(
                        basic, challenges: [#"Basic realm="peregrine""#]),
                    for: "/private/slow.bin")
            },
            request: { request($0.primary + "/private/slow.bin") },
            action: .pauseAndResume(atBytes: slowFile.count * 3 / 10),
            expected: ConformanceExpectation(
                events: ["head 200 length=4194304", "completed received=4194304 redirects=0"],
                requests: ["GET BASE/private/slow.bin", "GET BASE/private/slow.bin authorization=\(basic)"],
                sink: .bytes(of: slowFile, range: 0..<slowFile.count))
        ),
        ConformanceScenario(
            "a failing sink after a challenge",
            setup: { server, _ in
                server.setRoute(
                    .file(file).requiringAuthorization(basic, challenges: [#"Basic realm="peregrine""#]),
                    for: "/private/basic.bin")
            },
            request: { request($0.primary + "/private/basic.bin") },
            sink: .failing(afterBytes: 100_000, errno: 28),
            expected: ConformanceExpectation(
                events: ["head 200 length=300000", "failed write failed errno=28"],
                requests: ["GET BASE/private/basic.bin", "GET BASE/private/basic.bin authorization=\(basic)"],
                sink: .bytes(of: file, range: 0..<100_000))
        ),
        ConformanceScenario(
            "a 404 is not a challenge",
            setup: { _, _ in },
            request: { request($0.primary + "/missing.bin") },
            expected: ConformanceExpectation(
                events: ["head 404 length=10", "failed HTTP error status status=404"],
                requests: ["GET BASE/missing.bin"],
                sink: .nothing)
        ),
    ]
}
