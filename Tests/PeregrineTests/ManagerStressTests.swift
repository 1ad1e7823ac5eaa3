import Foundation
import Peregrine
import PeregrineCore
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
        try await Self.runTheMix(on: rigs, seed: seed)

        for rig in rigs {
            try await rig.quiesce()
            rig.checkInvariants(seed: seed)
            try rig.checkReloadNeedsNoRepair(seed: seed)
        }
    }

    /// The same mix while the store refuses some writes (a full disk: `record` throws) and
    /// fails the sync of others (written, its durability callback given an error). Nothing may
    /// hang and the live state must stay whole: the list and the engine agree row for row, the
    /// failures are reported, and the store — missing what it refused — still loads into a
    /// manager whose lists and engine agree (its repairs reported).
    @Test(arguments: SeededRandom.seeds(from: "PEREGRINE_STRESS_SEED", defaults: Array(1...12)))
    func storeFailuresInTheMixLeaveTheLiveStateWhole(seed: UInt64) async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-stress-failing")
        defer { scratch.remove() }
        let rigs = try (0..<2).map { try Rig(index: $0, scratch: scratch, failingOneIn: 12, seed: seed) }
        try await Self.runTheMix(on: rigs, seed: seed)

        for rig in rigs {
            rig.failing?.stopFailing()
            try await rig.quiesce()
            let context = "seed \(seed), manager \(rig.index)"
            rig.checkListsMatchTheEngine(rig.manager, context: context)
            // Every ending is announced, recorded or not: a task that ended waits for nothing.
            let ended = Set(
                rig.manager.engine.tasks().filter { $0.record.state == .finished || $0.record.state.isFailed }
                    .map(\.record.urlString))
            let announced = await rig.events.wait(timeout: .seconds(60)) { events in
                ended.isSubset(of: Self.endingsAnnounced(in: events))
            }
            let unannounced = ended.subtracting(Self.endingsAnnounced(in: announced))
            #expect(unannounced.isEmpty, "\(context): endings never announced: \(unannounced.sorted())")
            let failures = rig.failing?.failures ?? 0
            #expect(failures > 0, "\(context): the store never failed (the mix did not test anything)")
            #expect(rig.manager.lastStoreError != nil, "\(context): \(failures) store failures went unreported")
            let snapshot = try rig.store.load()
            rig.manager.shutDown()
            let reloaded = try Rig.manager(
                index: rig.index, scratch: scratch,
                transport: MockTransport(server: rig.transport.server, mode: .manual),
                store: InMemoryTaskStore(identifier: "reload\(rig.index)", snapshot: snapshot))
            rig.checkListsMatchTheEngine(reloaded, context: "\(context), reloaded")
            reloaded.shutDown()
        }
    }

    /// The tasks whose `finished` or `failed` event is among `events`.
    static func endingsAnnounced(in events: [DownloadManagerEvent]) -> Set<String> {
        Set(
            events.compactMap { event -> String? in
                switch event {
                case .task(.finished(let url, _)), .task(.failed(let url, _)): url
                default: nil
                }
            })
    }

    /// Sixteen threads, each a seeded sequence of random operations on either manager.
    static func runTheMix(on rigs: [Rig], seed: UInt64) async throws {
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
    }

    /// One manager under stress: its mock server and transport, its in-memory store.
    final class Rig: Sendable {
        let manager: DownloadManager
        let transport: MockTransport
        let store: InMemoryTaskStore
        /// The store as the manager sees it when it is to fail sometimes.
        let failing: FailingStore?
        /// Every event of the manager, from its start.
        let events: ManagerEventRecorder
        let urls: [String]
        let scratch: TemporaryDirectory
        let index: Int

        init(index: Int, scratch: TemporaryDirectory, failingOneIn rate: UInt64? = nil, seed: UInt64 = 0) throws {
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
            let store = InMemoryTaskStore(identifier: "stress\(index)")
            self.store = store
            failing = rate.map { FailingStore(store, failingOneIn: $0, seed: seed &+ UInt64(index)) }
            manager = try Self.manager(
                index: index, scratch: scratch, transport: transport, store: failing ?? store)
            events = ManagerEventRecorder(manager)
        }

        static func manager(
            index: Int, scratch: TemporaryDirectory, transport: MockTransport, store: any TaskStore
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
            checkListsMatchTheEngine(manager, context: context)
            let engineTasks = Dictionary(uniqueKeysWithValues: manager.engine.tasks().map { ($0.record.urlString, $0) })

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

        /// Rows and engine tasks of `manager` match one to one; nothing is both listed and trashed.
        func checkListsMatchTheEngine(_ manager: DownloadManager, context: String) {
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

/// A store that fails one write in `rate`, chosen by the write's number and the seed: half of
/// them refused (`record` throws, nothing written, as on a full disk), half written with a
/// failed sync (the durability callback gets the error). Which calls fail follows the seed;
/// which change a call carries follows the threads' interleaving.
final class FailingStore: TaskStore {
    private let inner: InMemoryTaskStore
    private let rate: UInt64
    private let seed: UInt64
    private let state = Locked((calls: UInt64(0), failures: 0, failing: true))

    init(_ inner: InMemoryTaskStore, failingOneIn rate: UInt64, seed: UInt64) {
        self.inner = inner
        self.rate = rate
        self.seed = seed
    }

    var identifier: String { inner.identifier }
    var failures: Int { state.withLock { $0.failures } }
    func stopFailing() { state.withLock { $0.failing = false } }

    private enum Fate { case write, refuse, failSync }

    private func fate() -> Fate {
        state.withLock { state in
            state.calls += 1
            guard state.failing else { return .write }
            var mixer = SeededRandom(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ state.calls)
            guard UInt64.random(in: 0..<rate, using: &mixer) == 0 else { return .write }
            state.failures += 1
            return Bool.random(using: &mixer) ? .refuse : .failSync
        }
    }

    func load() throws(StoreError) -> StoreSnapshot { try inner.load() }

    func record(_ changes: [StoreChange]) throws(StoreError) {
        switch fate() {
        case .write: try inner.record(changes)
        case .refuse: throw StoreError(.diskFull, "no space left on the device (a planted failure)")
        case .failSync:
            try inner.record(changes)
            throw StoreError(.ioFailed, "the sync failed (a planted failure)")
        }
    }

    func record(_ changes: [StoreChange], whenDurable: @escaping @Sendable (StoreError?) -> Void) throws(StoreError) {
        switch fate() {
        case .write: try inner.record(changes, whenDurable: whenDurable)
        case .refuse: throw StoreError(.diskFull, "no space left on the device (a planted failure)")
        case .failSync:
            try inner.record(changes)
            whenDurable(StoreError(.ioFailed, "the sync failed (a planted failure)"))
        }
    }

    func save() throws(StoreError) { try inner.save() }
    func compact() throws(StoreError) { try inner.compact() }
    func close() throws(StoreError) { try inner.close() }
}
