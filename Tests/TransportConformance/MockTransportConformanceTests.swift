import PeregrineMockTransport
import PeregrineTransportTestKit
import Testing

/// The conformance scenarios on the in-memory transport, at `http://mock.test`.
@Suite("MockTransport conformance")
struct MockTransportConformanceTests {
    @Test("MockTransport produces the expected trace", arguments: ConformanceScenarios.all)
    func mockTransportProducesExpectedTrace(_ scenario: ConformanceScenario) async {
        let server = MockServer()
        let transport = MockTransport(server: server)
        let trace = await ConformanceRunner.run(scenario, on: transport, routes: server, bases: .mock)
        expectConformance(trace, to: scenario)
    }
}
