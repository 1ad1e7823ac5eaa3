import Foundation
import PeregrineMockTransport
import PeregrinePersistence
import Testing

@testable import Peregrine
@testable import PeregrineEngine

/// The engine's sections reach the store whole and in the order of the steps that made them,
/// whichever thread gets to the drain first; a task's `finished` or `failed` event waits until
/// the store has its record.
@Suite struct ManagerEndingOrderTests {
    @Test func aSectionRunBeforeAnEarlierOneIsRecordedAfterIt() async throws {
        let h = try ManagerHarness()
        let url = h.url("/fast-404")
        let reason = FailureReason(.httpStatus, httpStatus: 404, message: "not found")
        let observer = try #require(h.manager.engine.configuration.sectionObserver)
        let section = h.manager.engine.state.withLock { $0.nextRecordSequence } + 1
        let failed = DownloadTaskRecord(
            urlString: url, state: .failed(reason), temporaryFileName: ".peregrine-00000000000000ab.part",
            addedAt: ManagerHarness.date)
        var added = failed
        added.state = .downloading
        // The engine sealed the task's adding (a section) and then its failure (the next), and
        // the thread with the failure gets to the drain first: the adding is recorded before.
        let adding = observer.engineDidSeal(
            events: [.added(url)], changes: [TaskRecordChange(sequence: section, kind: .upsert(added))],
            beforeRecording: nil, whenDurable: nil)
        let failing = observer.engineDidSeal(
            events: [.failed(url, reason)], changes: [TaskRecordChange(sequence: section + 1, kind: .upsert(failed))],
            beforeRecording: nil, whenDurable: nil)
        await onOwnThread { failing()?() }
        let recorded = h.snapshot.tasks.first { $0.urlString == url }
        #expect(
            recorded?.state.isFailed == true,
            "the store had \(String(describing: recorded?.state)) after the later section")
        await onOwnThread { adding()?() }
        await h.recorder.waitForTask(url) { if case .failed = $0 { true } else { false } }
        let stored = h.snapshot.tasks.first { $0.urlString == url }
        #expect(stored?.state.isFailed == true, "the store kept \(String(describing: stored?.state))")
    }
}
