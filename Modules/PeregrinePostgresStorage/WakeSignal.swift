import PeregrineCore
import Synchronization

/// A wake-up for waiters of one kind of notification (``PostgresClaimingQueue``'s new work, or
/// ended tasks): ``notify()`` ends every current wait, or the next one when nobody waits.
final class WakeSignal: Sendable {
    private struct State {
        /// A notification came while nobody waited: the next wait returns at once.
        var notified = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        /// Waits whose time ran out before they were registered.
        var timedOut: Set<Int> = []
    }

    private let state = Locked(State())

    /// Suspends until a notification (one that came since the last wait included), `timeout`
    /// or the calling task's cancellation; returns whether a notification came.
    func wait(timeout: Duration) async -> Bool {
        let id: Int? = state.withLock { state in
            if state.notified {
                state.notified = false
                return nil
            }
            state.nextWaiter += 1
            return state.nextWaiter
        }
        guard let id else { return true }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self.resume(id, with: false)
        }
        defer {
            timer.cancel()
            state.withLock { _ = $0.timedOut.remove(id) }
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let early = state.withLock { state -> Bool? in
                    if state.timedOut.remove(id) != nil { return false }
                    if state.notified {
                        state.notified = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
        } onCancel: {
            self.resume(id, with: false)
        }
    }

    /// Ends every current wait with `true`, or the next wait when nobody waits.
    func notify() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            let waiters = Array(state.waiters.values)
            state.waiters = [:]
            if waiters.isEmpty { state.notified = true }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Ends every current wait with `false` (the queue closes).
    func endAll() {
        let waiters = state.withLock { state in
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    private func resume(_ id: Int, with value: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.timedOut.insert(id)
                return nil
            }
            return waiter
        }
        waiter?.resume(returning: value)
    }
}
