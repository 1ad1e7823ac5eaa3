import Peregrine
import PeregrineCore
import Synchronization

extension RPCDispatcher {
    /// How long a client of a fleet service waits at most for an answer that needs the shared
    /// queue's database: past it the call answers that the queue is unreachable.
    public static let fleetAnswerBound: Duration = .seconds(1)

    /// How many calls of clients may wait for the database at once; more would only queue
    /// behind them (and behind them, the worker's lease renewals).
    static let fleetCallsWaitingLimit = 4

    /// The methods a fleet service answers from what it has in memory, without the database.
    static let fleetLocalMethods = methodNames(with: .fleetLocal)

    /// Runs a fleet service's call: at once when it needs no database; else on the threads for
    /// blocking calls, answered within ``fleetAnswerBound``. A database that does not answer in
    /// time (a network that drops packets, a server that hangs) gets the call an error saying
    /// the queue is unreachable — at once while an earlier call is still waiting for it — and
    /// `getGlobalStat` this service's own figures, marked `"peregrine.stale": "true"`.
    func dispatchFleetCall(
        _ method: String, _ params: RPCParameters, queue: any ClaimingTaskQueue
    ) async throws(RPCError) -> JSONValue {
        if Self.fleetLocalMethods.contains(method) { return try await dispatchMethod(method, params) }
        do throws(RPCError) {
            return try await bounded(queue) { () async throws(RPCError) -> JSONValue in
                try await self.dispatchMethod(method, params)
            }
        } catch {
            guard method == "aria2.getGlobalStat", error.isQueueUnreachable else { throw error }
            return localGlobalStat(stale: true)
        }
    }

    /// `body` on the threads for blocking calls; the caller waits for it at most
    /// ``fleetAnswerBound``. A body the caller stopped waiting for before it began is not run
    /// (no change a client was told failed is made later); one that began runs to its end.
    private func bounded(
        _ queue: any ClaimingTaskQueue, _ body: @escaping @Sendable () async throws(RPCError) -> JSONValue
    ) async throws(RPCError) -> JSONValue {
        let bound = Self.fleetAnswerBound
        let reachability = queue.reachability
        if reachability.isStuck(beyond: bound) { throw Self.queueUnreachable(reachability, waited: nil) }
        let admitted = fleetCallsWaiting.withLock { waiting -> Bool in
            guard waiting < Self.fleetCallsWaitingLimit else { return false }
            waiting += 1
            return true
        }
        guard admitted else { throw Self.queueUnreachable(queue.reachability, waited: nil) }
        let call = BoundedCall()
        Task(executorPreference: BlockingCallExecutor.shared) {
            defer { self.fleetCallsWaiting.withLock { $0 -= 1 } }
            guard call.begin() else { return }
            let result: Result<JSONValue, RPCError>
            do throws(RPCError) {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            call.end(result)
        }
        let timer = Task {
            try? await Task.sleep(for: bound)
            call.end(.failure(Self.queueUnreachable(queue.reachability, waited: bound)))
        }
        defer { timer.cancel() }
        return try await call.result().get()
    }

    static func queueUnreachable(_ reachability: QueueReachability, waited: Duration?) -> RPCError {
        var message = "The fleet's shared queue is unreachable"
        if let waited { message += ": its database did not answer within \(waited)" }
        if let since = reachability.failingSince ?? reachability.callStartedAt {
            let seconds = (ContinuousClock.now - since).components.seconds
            message += waited == nil ? ": its database has not answered for \(seconds) s" : " (\(seconds) s)"
        }
        message +=
            waited == nil
            ? "; try again later." : "; a change asked for may still be made when it answers. Try again later."
        return RPCError(message)
    }

    /// `getGlobalStat` from this service's own downloads only.
    func localGlobalStat(stale: Bool) -> JSONValue {
        let index = statusIndex()
        var speed: Int64 = 0
        for url in index.active { speed += self.speed(of: url) }
        let stopped = index.stopped + state.withLock { $0.removed.count }
        var object: JSONObject = [
            "downloadSpeed": .string(String(speed)), "uploadSpeed": "0",
            "numActive": .string(String(index.active.count)),
            "numWaiting": .string(String(index.waiting.count)), "numStopped": .string(String(stopped)),
            "numStoppedTotal": .string(String(stopped)),
        ]
        if stale { object["peregrine.stale"] = "true" }
        return .object(object)
    }
}

extension RPCError {
    /// Whether this is the answer of a fleet service whose queue did not answer.
    var isQueueUnreachable: Bool { message.hasPrefix("The fleet's shared queue is unreachable") }
}

/// One call run for a waiting client: whichever ends it first, the call or the timer, gives the
/// answer; the call does not begin once the answer is given.
private final class BoundedCall: Sendable {
    private struct State {
        var answer: Result<JSONValue, RPCError>?
        var waiter: CheckedContinuation<Result<JSONValue, RPCError>, Never>?
    }

    private let state = Locked(State())

    /// Whether the call may begin: nobody answered yet.
    func begin() -> Bool {
        state.withLock { state in
            state.answer == nil
        }
    }

    func end(_ result: Result<JSONValue, RPCError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<JSONValue, RPCError>, Never>? in
            guard state.answer == nil else { return nil }
            state.answer = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: result)
    }

    func result() async -> Result<JSONValue, RPCError> {
        await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> Result<JSONValue, RPCError>? in
                if let answer = state.answer { return answer }
                state.waiter = continuation
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }
}
