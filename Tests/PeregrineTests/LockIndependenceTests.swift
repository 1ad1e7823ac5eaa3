import Foundation
import PeregrineCore
import PeregrineMockTransport
import Testing

@testable import Peregrine

/// No component calls another while it holds a lock of its own: the engine hands its changes
/// over after its lock, the queue writes the store and calls the manager's list layer from its
/// drain with no lock held, and the list layer writes its lists outside its state lock. A store
/// that reads the manager's lists and the engine's tasks from inside every write proves it: a
/// write made under the list layer's or the engine's lock would take that lock again on the
/// same thread, and the process would trap.
@Suite struct LockIndependenceTests {
    /// An in-memory store that calls `probe` before every write.
    final class ProbingStore: TaskStore, @unchecked Sendable {
        let inner: InMemoryTaskStore
        let probe = Shared<(@Sendable () -> Void)?>(nil)
        let probes = Shared(0)

        init() { inner = InMemoryTaskStore(identifier: "probing") }

        var identifier: String { inner.identifier }
        func load() throws(StoreError) -> StoreSnapshot { try inner.load() }
        func save() throws(StoreError) { try inner.save() }
        func compact() throws(StoreError) { try inner.compact() }
        func close() throws(StoreError) { try inner.close() }

        func record(_ changes: [StoreChange]) throws(StoreError) {
            runProbe()
            try inner.record(changes)
        }

        func record(
            _ changes: [StoreChange], whenDurable: @escaping @Sendable (StoreError?) -> Void
        ) throws(StoreError) {
            runProbe()
            try inner.record(changes, whenDurable: whenDurable)
        }

        private func runProbe() {
            guard let probe = probe.withLock({ $0 }) else { return }
            probe()
            probes.withLock { $0 += 1 }
        }
    }

    @Test func theStoreIsWrittenWithNoLockOfTheListsOrTheEngineHeld() async throws {
        let store = ProbingStore()
        let h = try ManagerHarness { $0.storeFactory = { _, _ in store } }
        let manager = h.manager
        let reads = Shared(0)
        store.probe.withLock {
            $0 = {
                // The list layer's state lock, then the engine's.
                _ = manager.downloadList
                _ = manager.toDeleteList
                _ = manager.engine.urlStrings()
                reads.withLock { $0 += 1 }
            }
        }
        let urls = h.serveFiles(4)
        let finished = Shared(0)
        for url in urls {
            // A handle's closure also calls the manager: it runs after every lock.
            try manager.download(url).success { _ in
                _ = manager.downloadList
                finished.withLock { $0 += 1 }
            }
        }
        h.runUntilIdle()
        await h.recorder.wait { events in
            events.filter { if case .task(.finished) = $0 { true } else { false } }.count == urls.count
        }
        #expect(urls.allSatisfy { h.state($0) == .finished })

        // List mutations, options, extras, the trash.
        manager.sortListBy(type: .fileSize, order: .descending)
        manager.maxDownloadCount = 2
        manager.isTrashOpened = true
        manager.overallSpeedLimit = try SpeedLimit(bytesPerSecond: 1 << 20)
        manager.setMaxDownloadCount(1, in: .default)
        try manager.changeDisplayNameOfTask(urls[0], to: "first")
        try manager.updateMetaInfo(["note": .string("kept")], forTask: urls[1])
        try manager.deleteTasks([urls[2], urls[3]])
        try manager.restoreToDeleteTasks([urls[2]])
        try manager.cleanupToDeleteTasks([urls[3]])
        try manager.saveData()

        #expect(reads.withLock { $0 } == store.probes.withLock { $0 })
        #expect(reads.withLock { $0 } >= 10, "the store was written \(reads.withLock { $0 }) times")
        let saved = try store.load()
        #expect(saved.tasks.count == 3)
        #expect(saved.tasks.first { $0.urlString == urls[0] }?.displayName == "first")
        #expect(saved.lists[DownloadListKey.default.rawValue]?.trash == [])
        #expect(saved.lists[DownloadListKey.default.rawValue]?.maxDownloadCount == 1)
        await h.recorder.wait { _ in finished.withLock { $0 } == urls.count }
    }
}
