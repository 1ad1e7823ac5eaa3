import PeregrineCore
import PeregrineEngine
import PeregrineStorage
import Synchronization

/// Records store changes for a batch of engine changes, and tells when what waits on them may go.
package enum DurableWrite {
    /// What the caller does next, now and afterwards.
    package struct Outcome {
        /// The endings count as recorded now (nothing was written, or the store synced on this
        /// thread): call ``EndingGate/recorded(_:)`` with them now.
        package var endingsRecordedNow = false
        /// The store synced on this thread: run the engine's `whenDurable` afterwards, once the
        /// drain is done.
        package var engineWaitsAfterLock = false
    }

    /// Records `changes` in `store`, from the queue's ``OrderedDrain`` (so that the store gets
    /// them in sequence order). With no endings and nobody waiting, it returns at once. Otherwise it
    /// asks the store to call back once they are synced; then `engineWaits` runs (the engine
    /// removes placed files' temporary names: before the endings are announced, so a program
    /// that exits on them leaves no hidden file; a failed sync leaves the names, and a restart
    /// adopts their files), and `recorded` gets the endings. A store that calls back before
    /// `record` returns — on this thread, inside the drain — gets the outcome instead.
    package static func write(
        _ changes: [StoreChange], to store: any TaskStore, endings: [String: Int],
        engineWaits: (@Sendable () -> Void)?, killPoint: StaticString,
        failed: @escaping @Sendable (StoreError) -> Void,
        recorded: @escaping @Sendable ([String: Int]) -> Void
    ) -> Outcome {
        if endings.isEmpty, engineWaits == nil {
            SyncBatch.record(changes, in: store, failed: failed)
            return Outcome()
        }
        let call = SyncCall()
        do {
            try store.record(changes) { error in
                if let error { failed(error) }
                guard !call.callback(durable: error == nil) else { return }
                if error == nil, let engineWaits {
                    KillPoint.reach(killPoint)
                    engineWaits()
                }
                recorded(endings)
            }
        } catch {
            failed(error)
            return Outcome(endingsRecordedNow: true)
        }
        let early = call.returned()
        return Outcome(endingsRecordedNow: early, engineWaitsAfterLock: early && call.wasDurableEarly)
    }
}

/// Whether a store called back before `record` returned.
private final class SyncCall: Sendable {
    private let state = Locked((returned: false, calledEarly: false, durableEarly: false))

    /// The callback ran; true when `record` had not returned yet.
    func callback(durable: Bool) -> Bool {
        state.withLock { call in
            call.calledEarly = !call.returned
            call.durableEarly = call.calledEarly && durable
            return call.calledEarly
        }
    }

    /// `record` returned; true when the callback already ran.
    func returned() -> Bool {
        state.withLock { call in
            call.returned = true
            return call.calledEarly
        }
    }

    var wasDurableEarly: Bool { state.withLock { $0.durableEarly } }
}
