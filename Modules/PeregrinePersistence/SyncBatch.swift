import PeregrineCore
import PeregrineStorage
import Synchronization

/// Store writes that share one wait for durability.
///
/// Outside a batch, a recorder's write returns once the store synced it: one `fdatasync` per
/// change. Inside ``run(_:)`` (a task-local value, so only the writes made by the task that
/// runs the batch, on its own threads of execution, take part) a write asks the store to call
/// back once synced instead, and `run` returns only when every write of the batch is durable.
/// A store with group commit syncs such a run of writes together, so a client that adds 500
/// downloads in one call pays for one sync, not 1,500.
///
/// The caller's promise: nothing made inside the batch is reported as done to the one who
/// asked for it before `run` returns (a response is sent after it). What other observers see in
/// the meantime (the manager's state, its events) may be lost to a crash, as a change is that
/// was reported before the crash but not yet synced anywhere else; endings (finished, failed)
/// keep their own guarantee and are announced only once synced, batch or not.
package final class SyncBatch: Sendable {
    /// The batch of the current task, if it runs one.
    @TaskLocal package static var current: SyncBatch?

    private struct State {
        var outstanding = 0
        var waiter: CheckedContinuation<Void, Never>?
        /// Work to run when the body returns, before the wait for durability.
        var endings: [@Sendable () -> Void] = []
        /// The endings ran: later work cannot wait for the end any more.
        var ended = false
    }

    private let state = Locked(State())

    private init() {}

    /// Runs `body` as a batch: its store writes are synced by the time this returns.
    package static func run<Result: Sendable>(_ body: () async -> Result) async -> Result {
        let batch = SyncBatch()
        let result = await $current.withValue(batch) {
            let result = await body()
            batch.runEndings()
            return result
        }
        await batch.drain()
        return result
    }

    /// Runs `work` when the batch's body has returned, still inside the batch (its writes are
    /// synced with the others before ``run(_:)`` returns): for a write that many changes of a
    /// batch would each repeat, made once for all of them. False when the batch is past that
    /// point (work of an unstructured task that outlived the body): do it now instead.
    package func atEnd(_ work: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
            state.endings.append(work)
            return true
        }
    }

    private func runEndings() {
        // Work at the end may hand over more work for the end: it runs too.
        while let work = state.withLock({ state -> (@Sendable () -> Void)? in
            guard !state.endings.isEmpty else {
                state.ended = true
                return nil
            }
            return state.endings.removeFirst()
        }) {
            work()
        }
    }

    /// Records `changes` in `store`: synced before it returns, or, inside a batch, by the end
    /// of the batch. A failure is passed to `failed` (then or later).
    package static func record(
        _ changes: [StoreChange], in store: any TaskStore, failed: @escaping @Sendable (StoreError) -> Void
    ) {
        guard !changes.isEmpty else { return }
        guard let batch = current else {
            do {
                try store.record(changes)
            } catch {
                failed(error)
            }
            return
        }
        batch.state.withLock { $0.outstanding += 1 }
        do {
            try store.record(changes) { error in
                if let error { failed(error) }
                batch.finishOne()
            }
        } catch {
            failed(error)
            batch.finishOne()
        }
    }

    private func finishOne() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.outstanding -= 1
            guard state.outstanding == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    private func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                guard state.outstanding > 0 else { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
