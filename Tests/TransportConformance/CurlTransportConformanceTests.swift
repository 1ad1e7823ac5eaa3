import PeregrineCurlTransport
import PeregrineMockTransport
import PeregrineTransportTestKit
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
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let trace = try await ConformanceRunner.withLoopbackOrigins { routes, bases in
            await ConformanceRunner.run(scenario, on: transport, routes: routes, bases: bases)
        }
        expectConformance(trace, to: scenario)
    }
}
