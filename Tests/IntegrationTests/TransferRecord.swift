import PeregrineTransport

/// Everything one transfer reported, in order, and how it ended.
struct TransferRecord: Sendable, CustomStringConvertible {
    /// The request that was run.
    var request: TransferRequest
    /// Every event, the completion included, in the order the backend sent them.
    var events: [TransferEvent]
    /// How the transfer ended.
    var result: Result<TransferSummary, TransportError>

    /// The summary of a successful transfer.
    var summary: TransferSummary? { try? result.get() }

    /// The error of a failed transfer.
    var error: TransportError? {
        if case .failure(let error) = result { error } else { nil }
    }

    /// The redirects reported, in order.
    var redirects: [Redirect] {
        events.compactMap { if case .redirected(let redirect) = $0 { redirect } else { nil } }
    }

    /// The heads reported (a backend reports one at most).
    var heads: [ResponseHead] {
        events.compactMap { if case .head(let head) = $0 { head } else { nil } }
    }

    /// The number of completion events (exactly one for a correct backend).
    var completionCount: Int {
        events.count { if case .completed = $0 { true } else { false } }
    }

    /// A short account for failure messages: the outcome, the heads' statuses, the hops.
    var description: String {
        let outcome =
            switch result {
            case .success(let summary): "success, \(summary.receivedBytes) bytes"
            case .failure(let error): "failure \(error)"
            }
        return "\(request.method.rawValue) \(request.url) → \(outcome); heads \(heads.map(\.status)), "
            + "\(redirects.count) redirects, \(events.count) events"
    }
}
