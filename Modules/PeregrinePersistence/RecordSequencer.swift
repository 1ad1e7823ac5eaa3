import PeregrineEngine
import PeregrineStorage
import Synchronization

/// The bookkeeping every recorder of engine changes needs: the endings (`finished`, `failed`)
/// each batch of changes announces for the first time, and the ``EndingGate`` that holds events
/// until the store has those endings.
///
/// Not thread-safe: use it from one thread at a time, in the order the store is written (the
/// queue's ``OrderedDrain``, which hands it the engine's sections whole and in order).
package struct RecordSequencer: Sendable {
    /// The state of each task whose last record is an ending: a task's other states are never
    /// compared, and a service holds thousands of paused tasks (48 bytes of state and a slot
    /// each).
    private var endedStates: [String: DownloadState] = [:]
    private var gate = EndingGate()

    package init() {}

    /// A batch in order.
    package struct Batch {
        /// The changes, in order.
        package var fresh: [TaskRecordChange] = []
        /// How many new endings of each task the changes carry.
        package var endings: [String: Int] = [:]
        /// Held events that may go now.
        package var released: [EngineEvent] = []
    }

    /// Whether an event may be published now; see ``EndingGate/admit(_:)``.
    package mutating func admit(_ event: EngineEvent) -> Bool { gate.admit(event) }

    /// Takes a section's changes, in order: counts the endings they announce for the first time
    /// (a task recorded as failed and then as failed again announces one).
    package mutating func sequence(_ changes: [TaskRecordChange]) -> Batch {
        var batch = Batch()
        batch.fresh = changes
        for change in changes {
            let url = change.urlString
            switch change.kind {
            case .upsert(let record):
                switch record.state {
                case .finished, .failed:
                    if endedStates[url] != record.state { batch.endings[url, default: 0] += 1 }
                    endedStates[url] = record.state
                default:
                    if !endedStates.isEmpty { endedStates[url] = nil }
                }
            case .remove:
                endedStates[url] = nil
            }
        }
        return batch
    }

    /// Counts endings as recorded (synced, or never to be) and returns the held events that
    /// may go now.
    package mutating func recorded(_ endings: [String: Int]) -> [EngineEvent] {
        var released: [EngineEvent] = []
        for (url, count) in endings.sorted(by: { $0.key < $1.key }) {
            gate.countRecorded(url, count)
            released += gate.release(url)
        }
        return released
    }
}

/// Records store changes for a batch of engine changes, and tells when what waits on them may go.
package enum DurableWrite {
    /// What the caller does next, now and afterwards.
    package struct Outcome {
        /// The endings count as recorded now (nothing was written, or the store synced on this
        /// thread): call ``RecordSequencer/recorded(_:)`` with them now.
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
    private let state = Mutex((returned: false, calledEarly: false, durableEarly: false))

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
