import Foundation
import Peregrine
import PeregrineMockTransport
import TestSupport
import Testing

/// The public `DownloadManager` API called from 16 threads at once on two managers, each on a
/// mock transport that runs its transfers on its own thread: a seeded mix of adding, pausing,
/// resuming, stopping, restarting, deleting (by URL, index path and section, into the trash and
/// for good), sorting, moving, restoring and cleaning the trash, limits and queries. Then, once
/// everything stopped, the list and the engine must agree row for row, nothing may be both
/// listed and trashed, the store must hold exactly the live state, and a reload must need no
/// repair. A deadlock fails the test by its timeout instead of hanging it.
///
/// Replay one seed with `PEREGRINE_STRESS_SEED=SEED`.
@Suite struct ManagerStressTests {
    static let threads = 16
    static let operationsPerThread = 250
    static let lists: [DownloadListKey] = [.default, DownloadListKey("second")]

    @Test(arguments: SeededRandom.seeds(from: "PEREGRINE_STRESS_SEED", defaults: Array(1...24)))
    func publicAPIFromSixteenThreadsKeepsListEngineAndStoreInStep(seed: UInt64) async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-stress")
        defer { scratch.remove() }
        let rigs = try (0..<2).map { try Rig(index: $0, scratch: scratch) }

        let finished = await onOwnThread { () -> Bool in
            let group = DispatchGroup()
            for thread in 0..<Self.threads {
                group.enter()
                let worker = Thread {
                    var random = SeededRandom(seed: seed &* 1_000_003 &+ UInt64(thread))
                    for _ in 0..<Self.operationsPerThread {
                        let rig = rigs[Int.random(in: 0..<rigs.count, using: &random)]
                        rig.randomOperation(&random)
                    }
                    group.leave()
                }
                worker.stackSize = 1 << 20
                worker.start()
            }
            return group.wait(timeout: .now() + 300) == .success
        }
        try #require(finished, "seed \(seed): the operations did not end within 5 minutes (a deadlock?)")

        for rig in rigs {
            try await rig.quiesce()
            rig.checkInvariants(seed: seed)
            try rig.checkReloadNeedsNoRepair(seed: seed)
        }
    }

    /// One manager under stress: its mock server and transport, its in-memory store.
    final class Rig: Sendable {
        let manager: DownloadManager
        let transport: MockTransport
        let store: InMemoryTaskStore
        let urls: [String]
        let scratch: TemporaryDirectory
        let index: Int

        init(index: Int, scratch: TemporaryDirectory) throws {
            self.index = index
            self.scratch = scratch
            let server = MockServer()
            var urls: [String] = []
            for file in 0..<24 {
                let path = "/m\(index)/file\(file).bin"
                if file % 8 == 7 {
                    server.setRoute(.status(404), for: path)
                } else {
                    let body = MockBody.generated(seed: UInt64(file + 1), count: Int64(file * 997 % 20_000))
                    server.setRoute(.file(body, entityTag: .fixed("\"v\(file)\"")), for: path)
                }
                urls.append("http://mock.test" + path)
            }
            self.urls = urls
            transport = MockTransport(server: server, mode: .automatic)
            store = InMemoryTaskStore(identifier: "stress\(index)")
            manager = try Self.manager(index: index, scratch: scratch, transport: transport, store: store)
        }

        static func manager(
            index: Int, scratch: TemporaryDirectory, transport: MockTransport, store: InMemoryTaskStore
        ) throws -> DownloadManager {
            var configuration = DownloadManager.Configuration(
                downloadDirectory: scratch.path("downloads\(index)"), stateDirectory: scratch.path("state\(index)"),
                transport: transport, storeFactory: { _, _ in store })
            configuration.maxDownloadCount = 3
            configuration.clock = EngineClock(
                now: { transport.now.offset }, date: { ManagerHarness.date },
                schedule: { transport.schedule(after: $0, $1) })
            configuration.listClock = { ManagerHarness.date }
            return try DownloadManager(identifier: "stress\(index)", configuration: configuration)
        }

        func someURLs(_ random: inout SeededRandom) -> [String] {
            (0..<Int.random(in: 1...3, using: &random)).map { _ in urls.randomElement(using: &random)! }
        }

        func someIndexPath(_ random: inout SeededRandom) -> ListIndexPath {
            ListIndexPath(section: Int.random(in: 0...3, using: &random), item: Int.random(in: 0...6, using: &random))
        }

        func someTrash(_ random: inout SeededRandom, in list: DownloadListKey) -> [String] {
            let trash = manager.toDeleteList(in: list)
            guard !trash.isEmpty else { return [] }
            return Array(trash.shuffled(using: &random).prefix(Int.random(in: 1...trash.count, using: &random)))
        }

        /// One random call of the public API; refusals (unknown task, wrong mode, out of bounds)
        /// are part of the mix and ignored.
        func randomOperation(_ random: inout SeededRandom) {
            let list = ManagerStressTests.lists.randomElement(using: &random)!
            let m = manager
            switch Int.random(in: 0..<26, using: &random) {
            case 0, 1: _ = try? m.download(someURLs(&random), in: list)
            case 2: _ = try? m.download(urls.randomElement(using: &random)!, in: list)
            case 3:
                _ = try? m.download(
                    someURLs(&random), inManualModeAtSection: Int.random(in: 0...2, using: &random),
                    withTitle: "s\(Int.random(in: 0...9, using: &random))", in: list)
            case 4: _ = try? m.resumeTasks(someURLs(&random))
            case 5: _ = try? m.pauseTasks(someURLs(&random))
            case 6: _ = try? m.stopTasks(someURLs(&random))
            case 7: _ = try? m.restartTasks(someURLs(&random))
            case 8: _ = try? m.deleteTasks(someURLs(&random), keepFinishedFile: Bool.random(using: &random))
            case 9: _ = try? m.deleteTasks(at: [someIndexPath(&random)], in: list)
            case 10: _ = try? m.deleteTasksInSection(Int.random(in: 0...2, using: &random), in: list)
            case 11:
                m.sortListBy(
                    type: ListSortType.allCases.randomElement(using: &random)!,
                    order: ListSortOrder.allCases.randomElement(using: &random)!, in: list)
            case 12: try? m.moveTask(at: someIndexPath(&random), to: someIndexPath(&random), in: list)
            case 13: _ = try? m.restoreToDeleteTasks(someTrash(&random, in: list), in: list)
            case 14: _ = try? m.cleanupToDeleteTasks(someTrash(&random, in: list), in: list)
            case 15: m.isTrashOpened = Bool.random(using: &random)
            case 16: m.maxDownloadCount = Int.random(in: 0...4, using: &random)
            case 17:
                m.setMaxDownloadCount(
                    Bool.random(using: &random) ? nil : Int.random(in: 1...3, using: &random), in: list)
            case 18: _ = try? m.resumeTasks(at: [someIndexPath(&random)], in: list)
            case 19: _ = try? m.stopTasksInSection(Int.random(in: 0...2, using: &random), in: list)
            case 20: _ = m.resumeAllTasks(in: list)
            case 21: if Int.random(in: 0..<8, using: &random) == 0 { _ = m.emptyToDeleteList(in: list) }
            case 22:
                try? m.changeDisplayNameOfTask(
                    urls.randomElement(using: &random)!, to: "name \(Int.random(in: 0...9, using: &random))")
            case 23:
                m.setSectioning(
                    ListSectioning(rawValue: Int.random(in: 0...7, using: &random)), in: list)
            case 24: _ = try? m.deleteFilesOfTasks(someURLs(&random))
            default:
                // Queries, which must never see a half-made change.
                let listed = m.list(list).downloadList.flatMap { $0 }
                for url in listed.prefix(3) {
                    _ = m.indexPath(ofTask: url)
                    _ = m.downloadState(ofTask: url)
                    _ = m.fileDisplayName(ofTask: url)
                }
            }
        }

        /// Stops every transfer and waits until none runs.
        func quiesce() async throws {
            manager.maxDownloadCount = 0
            for key in manager.lists { _ = manager.stopAllTasks(in: key) }
            let settled = await onOwnThread { [transport, manager] () -> Bool in
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline {
                    let running = manager.engine.tasks().contains { $0.record.state == .downloading }
                    if transport.activeTransfers.isEmpty, !running { return true }
                    usleep(2_000)
                }
                return false
            }
            try #require(settled, "manager \(index): transfers did not stop")
            try manager.saveData()
        }

        /// Rows and engine tasks match one to one; nothing is both listed and trashed; the store
        /// holds what is live.
        func checkInvariants(seed: UInt64) {
            let context = "seed \(seed), manager \(index)"
            let engineTasks = Dictionary(uniqueKeysWithValues: manager.engine.tasks().map { ($0.record.urlString, $0) })
            var rows: [String: DownloadListKey] = [:]
            for key in manager.lists {
                let list = manager.list(key)
                let listed = list.downloadList.flatMap { $0 }
                let trashed = list.toDeleteList
                #expect(Set(listed).isDisjoint(with: trashed), "\(context): listed and trashed in \(key)")
                for url in listed + trashed {
                    #expect(rows[url] == nil, "\(context): \(url) has two rows")
                    rows[url] = key
                    #expect(engineTasks[url] != nil, "\(context): the row \(url) in \(key) has no engine task")
                    #expect(engineTasks[url]?.record.list == key, "\(context): \(url) is listed in another list")
                }
            }
            for url in engineTasks.keys {
                #expect(rows[url] != nil, "\(context): the engine task \(url) has no row")
            }

            let snapshot = (try? store.load()) ?? StoreSnapshot()
            let stored = Dictionary(uniqueKeysWithValues: snapshot.tasks.map { ($0.urlString, $0) })
            #expect(
                Set(stored.keys) == Set(engineTasks.keys), "\(context): the store's tasks differ from the live ones")
            for (url, task) in engineTasks {
                #expect(stored[url]?.state == task.record.state, "\(context): \(url) stored in another state")
                #expect(stored[url]?.list == task.record.list.rawValue, "\(context): \(url) stored in another list")
            }
            for key in manager.lists {
                let live = manager.list(key)
                let saved = snapshot.lists[key.rawValue]
                #expect(saved?.sections == live.downloadList, "\(context): list \(key) stored differently")
                #expect(saved?.trash == live.toDeleteList, "\(context): trash of \(key) stored differently")
            }
        }

        /// A new manager on the store's snapshot repairs nothing and shows the same lists.
        func checkReloadNeedsNoRepair(seed: UInt64) throws {
            let context = "seed \(seed), manager \(index)"
            let snapshot = try store.load()
            manager.shutDown()
            let reloadedStore = InMemoryTaskStore(identifier: "reload\(index)", snapshot: snapshot)
            let reloaded = try Self.manager(
                index: index, scratch: scratch, transport: MockTransport(server: transport.server, mode: .manual),
                store: reloadedStore)
            #expect(reloaded.loadRepairs.isEmpty, "\(context): the reload repaired \(reloaded.loadRepairs)")
            for key in manager.lists {
                #expect(reloaded.list(key).downloadList == manager.list(key).downloadList, "\(context): \(key)")
                #expect(reloaded.list(key).toDeleteList == manager.list(key).toDeleteList, "\(context): \(key)")
            }
        }
    }
}
