import Foundation
import Peregrine
import PeregrineCore
import PeregrineStorage
import Synchronization
import Testing

/// `DownloadManager.withGroupCommit`: the operations inside do not wait for their own syncs,
/// and it returns only once every change they made is durable.
@Suite struct GroupCommitTests {
    /// A store whose durable writes finish 20 ms later, in order, on a queue of its own; what
    /// the inner store holds is what is durable. Counts the writes that waited on the caller's
    /// thread and those that called back.
    final class DeferringStore: TaskStore {
        let inner = InMemoryTaskStore(identifier: "deferring")
        private let queue = DispatchQueue(label: "deferring-store")
        let counts = Locked((waited: 0, calledBack: 0))
        /// How many records of a list (`putList`) it was given.
        let listWrites = Locked(0)
        /// How many records of each task (`putTask`) it was given.
        let taskWrites = Locked<[String: Int]>([:])
        var identifier: String { inner.identifier }

        private func countLists(_ changes: [StoreChange]) {
            let lists = changes.count { if case .putList = $0 { true } else { false } }
            listWrites.withLock { $0 += lists }
            taskWrites.withLock { writes in
                for case .putTask(let task) in changes { writes[task.urlString, default: 0] += 1 }
            }
        }

        func load() throws(StoreError) -> StoreSnapshot { try inner.load() }

        func record(_ changes: [StoreChange]) throws(StoreError) {
            counts.withLock { $0.waited += 1 }
            countLists(changes)
            queue.sync { [inner] in try? inner.record(changes) }
        }

        func record(_ changes: [StoreChange], whenDurable: @escaping @Sendable (StoreError?) -> Void)
            throws(StoreError)
        {
            counts.withLock { $0.calledBack += 1 }
            countLists(changes)
            queue.async { [inner] in
                usleep(20_000)
                try? inner.record(changes)
                whenDurable(nil)
            }
        }

        func save() throws(StoreError) { queue.sync {} }
        func compact() throws(StoreError) {}
        func close() throws(StoreError) { queue.sync {} }
    }

    @Test func addsInsideAGroupCommitAreDurableWhenItReturnsAndWaitedForNoSyncOfTheirOwn() async throws {
        let store = DeferringStore()
        let h = try ManagerHarness {
            $0.storeFactory = { _, _ in store }
            $0.downloadNewFileImmediately = false
        }
        let urls = (0..<20).map { h.url("/g\($0).bin") }
        try h.manager.download([h.url("/before.bin")])
        let waitedBefore = store.counts.withLock { $0.waited }
        #expect(waitedBefore > 0, "outside a group commit an add waits for its sync")

        let added = await h.manager.withGroupCommit { () -> Int in
            var added = 0
            for url in urls { added += (try? h.manager.download([url]).count) ?? 0 }
            try? h.manager.updateMetaInfo(["k": "v"], forTask: urls[0])
            return added
        }
        #expect(added == urls.count)
        let counts = store.counts.withLock { $0 }
        #expect(counts.waited == waitedBefore, "no write inside the group commit waited on its own")
        #expect(counts.calledBack > 0)
        // Durable on return: the inner store (what the queue has written) holds every task and
        // the list with all of them, without waiting any further.
        let durable = try store.inner.load()
        #expect(Set(durable.tasks.map(\.urlString)).isSuperset(of: urls))
        #expect(durable.tasks.first { $0.urlString == urls[0] }?.metaInfo["k"] == .string("v"))
        #expect(durable.lists[""]?.sections.joined().filter { urls.contains($0) }.count == urls.count)
    }

    @Test func aGroupCommitWritesEachListItChangedOnceAtItsEnd() async throws {
        let store = DeferringStore()
        let h = try ManagerHarness {
            $0.storeFactory = { _, _ in store }
            $0.downloadNewFileImmediately = false
        }
        // Outside a group commit every addition writes its list.
        let before = store.listWrites.withLock { $0 }
        for index in 0..<5 { try h.manager.download([h.url("/alone\(index).bin")]) }
        #expect(store.listWrites.withLock { $0 } - before >= 5)

        // Inside one, 30 additions and a removal write the list once, as it is at the end.
        let urls = (0..<30).map { h.url("/batched\($0).bin") }
        let start = store.listWrites.withLock { $0 }
        await h.manager.withGroupCommit {
            for url in urls { _ = try? h.manager.download([url]) }
            _ = try? h.manager.deleteTasks([urls[3]])
        }
        #expect(store.listWrites.withLock { $0 } - start == 1)
        let durable = try store.inner.load()
        let listed = durable.lists[""]?.sections.joined().filter { urls.contains($0) } ?? []
        // The list as it was when the group commit ended (in the list's sort order).
        #expect(listed.count == urls.count - 1)
        #expect(Set(listed) == Set(urls).subtracting([urls[3]]))
    }

    @Test func eventsMadeInsideAGroupCommitReachSubscribersOnceItsBodyEnds() async throws {
        let h = try ManagerHarness { $0.downloadNewFileImmediately = false }
        let events = h.manager.events()
        let added = Locked<[String]>([])
        let consumer = Task {
            for await event in events {
                if case .task(.added(let url)) = event { added.withLock { $0.append(url) } }
            }
        }
        defer { consumer.cancel() }
        let urls = (0..<10).map { h.url("/held\($0).bin") }
        let seenInside = await h.manager.withGroupCommit { () -> Int in
            for url in urls { _ = try? h.manager.download([url]) }
            // Delivered events would reach the consumer well within this.
            try? await Task.sleep(for: .milliseconds(200))
            return added.withLock { $0.count }
        }
        #expect(seenInside == 0, "events reached a subscriber before the group commit's body ended")
        for _ in 0..<500 where added.withLock({ $0.count }) < urls.count {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(added.withLock { $0 } == urls, "every addition, in order, once the group commit ended")

        // Outside a group commit an event is not held.
        let alone = h.url("/alone.bin")
        try h.manager.download([alone])
        for _ in 0..<500 where added.withLock({ $0.last }) != alone { try await Task.sleep(for: .milliseconds(10)) }
        #expect(added.withLock { $0.last } == alone)
    }

    @Test func metaInfoGivenWithAnAdditionIsRecordedWithTheTaskInOneWrite() throws {
        let store = DeferringStore()
        let h = try ManagerHarness {
            $0.storeFactory = { _, _ in store }
            $0.downloadNewFileImmediately = false
        }
        let together = h.url("/together.bin")
        let apart = h.url("/apart.bin")
        h.manager.downloadInAnyMode([DownloadItem(together)], metaInfo: [together: ["k": .string("v")]])
        h.manager.downloadInAnyMode([DownloadItem(apart)])
        try h.manager.updateMetaInfo(["k": .string("v")], forTask: apart)
        let writes = store.taskWrites.withLock { $0 }
        #expect(writes[together] == 1)
        #expect(writes[apart] == 2)
        #expect(h.manager.metaInfo(ofTask: together)?["k"] == .string("v"))
        let stored = try store.inner.load().tasks.first { $0.urlString == together }
        #expect(stored?.metaInfo["k"] == .string("v"))
    }
}
