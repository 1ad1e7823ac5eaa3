import Foundation
import PeregrineMockTransport
import PeregrinePersistence
import Testing

@testable import Peregrine
@testable import PeregrineEngine

/// A task's `finished` or `failed` event waits until the store has its record; the record
/// changes of one task can reach the manager from two threads in either order.
@Suite struct ManagerEndingOrderTests {
    @Test func anEndingWhoseRecordArrivesBeforeTheTasksFirstRecordIsStillAnnounced() async throws {
        let h = try ManagerHarness()
        let url = h.url("/fast-404")
        let reason = FailureReason(.httpStatus, httpStatus: 404, message: "not found")
        // The engine announced the failure (its next section), then reported the failed record
        // (sequence 2) before the record of the task's adding (sequence 1) arrived.
        // The manager's queue observes the engine.
        let events = try #require(h.manager.engine.configuration.eventObserver)
        let records = try #require(h.manager.engine.configuration.recordObserver)
        let section = h.manager.engine.state.withLock { $0.nextRecordSequence } + 1
        events.engineDidEmit([.added(url), .failed(url, reason)], section: section)?()
        let failed = DownloadTaskRecord(
            urlString: url, state: .failed(reason), temporaryFileName: ".peregrine-00000000000000ab.part",
            addedAt: ManagerHarness.date)
        var added = failed
        added.state = .downloading
        records.engineDidChange([TaskRecordChange(sequence: 1_000_002, kind: .upsert(failed))])
        records.engineDidChange([TaskRecordChange(sequence: 1_000_001, kind: .upsert(added))])
        await h.recorder.waitForTask(url) { if case .failed = $0 { true } else { false } }
    }
}
