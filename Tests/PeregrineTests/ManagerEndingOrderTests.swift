import Foundation
import PeregrineMockTransport
import PeregrinePersistence
import Testing

@testable import Peregrine
@testable import PeregrineEngine

/// The engine's sections reach the store whole and in their order, whichever thread hands its
/// section over first; a task's `finished` or `failed` event waits until the store has its
/// record.
@Suite struct ManagerEndingOrderTests {
    @Test func aSectionHandedOverBeforeAnEarlierOneWaitsForIt() async throws {
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
        // The engine announced the task's adding (a section) and then its failure (the next),
        // and the thread with the failure hands it over first: it waits for the adding.
        async let later: Void = onOwnThread {
            observer.engineDidCommit(
                section: section + 1, events: [.failed(url, reason)],
                changes: [TaskRecordChange(sequence: section + 1, kind: .upsert(failed))], whenDurable: nil)?()
        }
        var polls = 0
        while h.manager.core.drain.waitingSections == 0, polls < 20_000 {
            polls += 1
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(h.manager.core.drain.waitingSections == 1, "the later section did not wait")
        #expect(!h.snapshot.tasks.contains { $0.urlString == url }, "the later section was recorded first")
        observer.engineDidCommit(
            section: section, events: [.added(url)],
            changes: [TaskRecordChange(sequence: section, kind: .upsert(added))], whenDurable: nil)?()
        await later
        await h.recorder.waitForTask(url) { if case .failed = $0 { true } else { false } }
        let stored = h.snapshot.tasks.first { $0.urlString == url }
        #expect(stored?.state.isFailed == true, "the store kept \(String(describing: stored?.state))")
    }
}
