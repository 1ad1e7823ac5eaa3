import Dispatch
import PeregrineCore
import Synchronization

/// Runs thumbnail jobs on Dispatch's global threads, at most `limit` at a time, in the order
/// they were submitted.
final class ThumbnailJobQueue: Sendable {
    typealias Job = @Sendable () -> Void

    private struct State {
        var running = 0
        var pending: [Job] = []
        var next = 0
    }

    private let limit: Int
    private let state = Locked(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    func submit(_ job: @escaping Job) {
        let start = state.withLock { state -> Bool in
            if state.running < limit {
                state.running += 1
                return true
            }
            state.pending.append(job)
            return false
        }
        if start { DispatchQueue.global(qos: .utility).async { self.drain(first: job) } }
    }

    private func drain(first: @escaping Job) {
        var job: Job? = first
        while let current = job {
            current()
            job = state.withLock { state -> Job? in
                guard state.next < state.pending.count else {
                    state.pending.removeAll()
                    state.next = 0
                    state.running -= 1
                    return nil
                }
                let job = state.pending[state.next]
                state.next += 1
                if state.next > 64, state.next * 2 > state.pending.count {
                    state.pending.removeFirst(state.next)
                    state.next = 0
                }
                return job
            }
        }
    }
}
