import TestSupport
import Testing

extension ConformanceScenario: CustomTestStringConvertible {
    public var testDescription: String { name }
}

/// Expects `trace` to be exactly what `scenario` expects: events, requests, sink, and no
/// breach of the Transport rules.
func expectConformance(
    _ trace: ConformanceTrace, to scenario: ConformanceScenario, sourceLocation: SourceLocation = #_sourceLocation
) {
    let expected = scenario.expected
    #expect(trace.events == expected.events, "events of \"\(scenario.name)\"", sourceLocation: sourceLocation)
    #expect(trace.requests == expected.requests, "requests of \"\(scenario.name)\"", sourceLocation: sourceLocation)
    #expect(
        expected.sink.isSatisfied(by: trace.sink),
        "sink of \"\(scenario.name)\": expected \(expected.sink), got \(trace.sink)", sourceLocation: sourceLocation)
    #expect(trace.violations == [], "rule breaches in \"\(scenario.name)\"", sourceLocation: sourceLocation)
}
