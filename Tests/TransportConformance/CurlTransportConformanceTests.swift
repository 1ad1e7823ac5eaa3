import PeregrineCurlTransport
import PeregrineMockTransport
import TestSupport
import Testing

/// The conformance scenarios on the libcurl backend, against loopback HTTP servers that
/// serve the same routes as the in-memory transport: `BASE` and `OTHER` are two servers on
/// two ports. Scenarios that need TLS run on the mock only.
@Suite("CurlTransport conformance")
struct CurlTransportConformanceTests {
    @Test(
        "CurlTransport produces the expected trace against the loopback server",
        arguments: ConformanceScenarios.all.filter { !$0.requiresTLS })
    func curlTransportProducesExpectedTrace(_ scenario: ConformanceScenario) async throws {
        let routes = MockServer()
        let primary = LoopbackHTTPServer(serving: routes)
        let other = LoopbackHTTPServer(serving: routes)
        try primary.start()
        defer { primary.stop() }
        try other.start()
        defer { other.stop() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let bases = ConformanceBases(primary: primary.baseURL, other: other.baseURL)
        let trace = await ConformanceRunner.run(scenario, on: transport, routes: routes, bases: bases)
        expectConformance(trace, to: scenario)
    }
}
