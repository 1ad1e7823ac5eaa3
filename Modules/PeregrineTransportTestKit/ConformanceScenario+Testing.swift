import Testing

extension ConformanceScenario: CustomTestStringConvertible {
    public var testDescription: String { name }
}

/// Expects `trace` to be exactly what `scenario` expects: events, requests, sink, and no
/// breach of the Transport rules.
public func expectConformance(
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

extension ConformanceRunner {
    /// Runs `body` with two loopback HTTP servers on two ports serving the same routes — `BASE`
    /// and `OTHER` of a socket backend's scenarios — and stops them afterwards. Scenarios that
    /// need TLS (``ConformanceScenario/requiresTLS``) have no origin here.
    ///
    /// ```swift
    /// let trace = try await ConformanceRunner.withLoopbackOrigins { routes, bases in
    ///     await ConformanceRunner.run(scenario, on: transport, routes: routes, bases: bases)
    /// }
    /// expectConformance(trace, to: scenario)
    /// ```
    public static func withLoopbackOrigins<Result>(
        _ body: (MockServer, ConformanceBases) async throws -> Result
    ) async throws -> Result {
        let routes = MockServer()
        let primary = LoopbackHTTPServer(serving: routes)
        let other = LoopbackHTTPServer(serving: routes)
        try primary.start()
        defer { primary.stop() }
        try other.start()
        defer { other.stop() }
        return try await body(routes, ConformanceBases(primary: primary.baseURL, other: other.baseURL))
    }
}
