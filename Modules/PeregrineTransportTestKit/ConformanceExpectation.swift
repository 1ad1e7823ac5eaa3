import PeregrineMockTransport

/// The trace a conformance scenario must produce on every backend.
public struct ConformanceExpectation: Sendable {
    /// The normalised events, progress excluded (see ``ConformanceTrace/events``).
    public var events: [String]
    /// The normalised requests the server received (see ``ConformanceTrace/requests``).
    public var requests: [String]
    /// What the sink must hold.
    public var sink: ConformanceSinkExpectation

    /// Creates an expectation.
    public init(events: [String], requests: [String], sink: ConformanceSinkExpectation) {
        self.events = events
        self.requests = requests
        self.sink = sink
    }
}

/// What a conformance scenario's sink must hold at the end.
public enum ConformanceSinkExpectation: Sendable, CustomStringConvertible {
    /// No byte was written.
    case nothing
    /// Exactly the bytes `range` of `body`, written from offset `range.lowerBound`.
    case bytes(of: MockBody, range: Range<Int64>)
    /// A prefix of `body` from offset `start` of at least `atLeast` and fewer than `below`
    /// bytes: for a transfer cancelled part way, whose exact length depends on chunking.
    case prefix(of: MockBody, start: Int64, atLeast: Int64, below: Int64)

    /// Whether `record` holds what is expected.
    public func isSatisfied(by record: ConformanceSinkRecord) -> Bool {
        switch self {
        case .nothing:
            return record.count == 0
        case .bytes(let body, let range):
            return record == ConformanceSinkRecord(body: body, range: range)
        case .prefix(let body, let start, let atLeast, let below):
            guard record.start == start, record.count >= atLeast, record.count < below else { return false }
            return record == ConformanceSinkRecord(body: body, range: start..<(start + record.count))
        }
    }

    public var description: String {
        switch self {
        case .nothing:
            "nothing written"
        case .bytes(let body, let range):
            ConformanceSinkRecord(body: body, range: range).description
        case .prefix(_, let start, let atLeast, let below):
            "a prefix of the body from \(start), at least \(atLeast) and fewer than \(below) bytes"
        }
    }
}
