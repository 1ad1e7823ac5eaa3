import PeregrineCore

/// Work that waits until the answer of the request that asked for it is handed to its
/// connection: a shutdown, whose caller waits for its "OK". The paths that write answers
/// (`POST /jsonrpc`, WebSocket) answer inside ``collect(_:)`` and run what it gathered once the
/// answer is written; a call answered any other way (a test calling `respond(to:)`) runs it at
/// once.
final class AnswerFollowUps: Sendable {
    @TaskLocal private static var current: AnswerFollowUps?

    private let work = Locked<[@Sendable () -> Void]>([])

    /// Runs `body`, gathering the follow-ups of the calls it answers.
    static func collect<Result: Sendable>(
        _ body: () async -> Result
    ) async -> (result: Result, followUps: AnswerFollowUps?) {
        let followUps = AnswerFollowUps()
        let result = await $current.withValue(followUps) { await body() }
        return (result, followUps.work.withLock { $0.isEmpty } ? nil : followUps)
    }

    /// Runs `work` once the current answer is written, or now when no path writes it.
    static func afterAnswer(_ work: @escaping @Sendable () -> Void) {
        guard let current else { return work() }
        current.work.withLock { $0.append(work) }
    }

    /// Runs what was gathered (the answer is written).
    func run() {
        let gathered = work.withLock { work in
            defer { work = [] }
            return work
        }
        for item in gathered { item() }
    }
}
