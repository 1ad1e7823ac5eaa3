import PeregrineCore
import PeregrineStorage
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The behaviour every `TaskStore` must have, as checks any package's tests can run on its
/// own backend (as swift-metrics ships a test kit). Each check records its failures as
/// swift-testing issues.
///
/// ```swift
/// @Test(arguments: TaskStoreConformance.checks)
/// func myStoreConforms(_ check: TaskStoreConformance.Check) async throws {
///     let directory = try makeTemporaryDirectory()
///     let store = TaskStoreConformance(reopening: { try MyStore(at: directory) })
///     try await store.run(check)
/// }
/// ```
///
/// A store that keeps its data across `TaskStore.close()` is checked with
/// ``init(reopening:)``: the closure opens the same data each time it is called (a check closes
/// one store before it opens the next), so a check can see what survives. One that keeps
/// nothing (`InMemoryTaskStore`) is checked with ``init(transient:)``: the check goes on with
/// the same store instead of reopening it.
public struct TaskStoreConformance: Sendable {
    /// Opens the store under test.
    public typealias Open = @Sendable () throws -> any TaskStore

    private let open: Open
    private let persists: Bool

    /// A store whose data outlives it: `open` opens the same data on every call, after the
    /// previous store on it was closed. Give every check fresh, empty data.
    public init(reopening open: @escaping Open) {
        self.open = open
        persists = true
    }

    /// A store whose data lives only as long as it does: `open` makes a fresh, empty one, called
    /// once per check.
    public init(transient open: @escaping Open) {
        self.open = open
        persists = false
    }

    /// One named check.
    public struct Check: Sendable, CustomStringConvertible, CustomTestStringConvertible {
        /// What the check shows.
        public let name: String
        let body: @Sendable (TaskStoreConformance) async throws -> Void

        public var description: String { name }
        public var testDescription: String { name }
    }

    /// Runs `check` on the store.
    public func run(_ check: Check) async throws {
        try await check.body(self)
    }

    /// Runs every check on the store, one after the other; for a backend whose data must be
    /// fresh per check, prefer a parameterized test over ``checks``.
    public static func runAll(on makeStore: () throws -> TaskStoreConformance) async throws {
        for check in checks { try await makeStore().run(check) }
    }

    /// Every check.
    public static let checks: [Check] = [
        Check(name: "every field and property-list type round-trips") { try $0.roundTripKeepsEveryField() },
        Check(name: "every task state round-trips") { try $0.everyTaskStateRoundTrips() },
        Check(name: "tasks keep the order of their first addition") { try $0.tasksKeepTheOrderOfFirstAddition() },
        Check(name: "lists, configuration and thumbnails are replaced and removed") {
            try $0.listsConfigurationAndThumbnailsAreReplacedAndRemoved()
        },
        Check(name: "a closed store refuses work") { try $0.aClosedStoreRefusesWork() },
        Check(name: "saved progress survives") { try $0.savedProgressSurvives() },
        Check(name: "compaction keeps everything") { try $0.compactionKeepsEverything() },
        Check(name: "concurrent recorders lose nothing") { try await $0.concurrentRecordersLoseNothing() },
        Check(name: "each durability callback runs once, without error") {
            try await $0.eachDurabilityCallbackRunsOnce()
        },
    ]

    // MARK: Helpers

    /// The snapshot after the store is closed and its data opened again (or, for a transient
    /// store, the live one); the store returned is the one to go on with and to close.
    private func reloaded(_ store: any TaskStore) throws -> (any TaskStore, StoreSnapshot) {
        guard persists else { return (store, try store.load()) }
        try store.close()
        let reopened = try open()
        return (reopened, try reopened.load())
    }

    private func withStore(_ body: (any TaskStore) throws -> (any TaskStore)) throws {
        let last = try body(try open())
        try last.close()
    }

    // MARK: Checks

    func roundTripKeepsEveryField() throws {
        try withStore { store in
            let task = StoreFixtures.fullTask()
            try store.record([
                .putTask(task), .putList(StoreFixtures.list), .setConfiguration(StoreFixtures.configuration),
                .setCustomThumbnail(urlString: task.urlString, StoreFixtures.thumbnail),
            ])
            let live = try store.load()
            let (current, loaded) = try reloaded(store)
            for snapshot in [live, loaded] {
                #expect(snapshot.repairs == [])
                #expect(snapshot.tasks == [task])
                #expect(snapshot.lists == ["videos": StoreFixtures.list])
                #expect(snapshot.configuration == StoreFixtures.configuration)
                #expect(snapshot.customThumbnails == [task.urlString: StoreFixtures.thumbnail])
            }
            // The exact cases, spelled out: an integral real stays a real, an integer an integer.
            let meta = loaded.tasks.first?.metaInfo ?? [:]
            #expect(meta["realOne"] == .real(1.0))
            #expect(meta["integer"] == .integer(42))
            #expect(meta["max"] == .integer(.max))
            #expect(meta["date"] == .date(StoreFixtures.date))
            #expect(meta["data"] == .data(Data([0, 1, 2, 0x7F, 0x80, 0xFF])))
            return current
        }
    }

    func everyTaskStateRoundTrips() throws {
        try withStore { store in
            let states: [DownloadState] = [
                .notInList, .pending, .downloading, .paused, .stopped, .finished,
                .failed(FailureReason(.network, message: "")), .failed(FailureReason(.diskFull, message: "full")),
            ]
            let tasks = states.enumerated().map { StoreFixtures.task($0.offset, state: $0.element) }
            try store.record(tasks.map(StoreChange.putTask))
            let (current, loaded) = try reloaded(store)
            #expect(loaded.tasks == tasks)
            return current
        }
    }

    func tasksKeepTheOrderOfFirstAddition() throws {
        try withStore { store in
            try store.record((0..<5).map { .putTask(StoreFixtures.task($0)) })
            try store.record([.removeTask(urlString: StoreFixtures.task(1).urlString)])
            try store.record([.putTask(StoreFixtures.task(3, state: .finished, received: 1000))])
            try store.record([.putTask(StoreFixtures.task(1, state: .stopped))])
            try store.record([.removeTask(urlString: "https://never.added/")])
            let expected = [
                StoreFixtures.task(0), StoreFixtures.task(2), StoreFixtures.task(3, state: .finished, received: 1000),
                StoreFixtures.task(4), StoreFixtures.task(1, state: .stopped),
            ]
            #expect(try store.load().tasks == expected)
            let (current, loaded) = try reloaded(store)
            #expect(loaded.tasks == expected)
            return current
        }
    }

    func listsConfigurationAndThumbnailsAreReplacedAndRemoved() throws {
        try withStore { store in
            var other = StoreFixtures.list
            other.identifier = ""
            other.maxDownloadCount = nil
            other.addTimeReference = nil
            let task = StoreFixtures.task(7)
            try store.record([
                .putList(StoreFixtures.list), .putList(other), .setConfiguration(["a": .integer(1)]),
                .setConfiguration(StoreFixtures.configuration), .putTask(task),
                .setCustomThumbnail(urlString: task.urlString, StoreFixtures.thumbnail),
                .setCustomThumbnail(urlString: "https://other/", StoreFixtures.thumbnail),
                .setCustomThumbnail(urlString: "https://other/", nil),
                .removeList(identifier: "videos"),
            ])
            var snapshot = try store.load()
            #expect(snapshot.lists == ["": other])
            #expect(snapshot.configuration == StoreFixtures.configuration)
            #expect(snapshot.customThumbnails == [task.urlString: StoreFixtures.thumbnail])
            try store.record([.removeTask(urlString: task.urlString)])
            let current: any TaskStore
            (current, snapshot) = try reloaded(store)
            #expect(snapshot.customThumbnails.isEmpty, "removing a task removes its custom thumbnail")
            #expect(snapshot.lists == ["": other])
            #expect(snapshot.configuration == StoreFixtures.configuration)
            return current
        }
    }

    func aClosedStoreRefusesWork() throws {
        let store = try open()
        try store.record([.putTask(StoreFixtures.task(1))])
        try store.close()
        for (name, call) in [
            ("load", { _ = try store.load() }), ("record", { try store.record([.putTask(StoreFixtures.task(2))]) }),
            ("save", { try store.save() }), ("compact", { try store.compact() }),
        ] as [(String, () throws -> Void)] {
            do {
                try call()
                Issue.record("\(name) after close did not throw")
            } catch let error as StoreError {
                #expect(error.code == .closed, "\(name) after close")
            } catch {
                Issue.record("\(name) after close threw \(error), not a StoreError")
            }
        }
        guard persists else { return }
        let reopened = try open()
        defer { try? reopened.close() }
        #expect(try reopened.load().tasks == [StoreFixtures.task(1)], "what was recorded before close stays")
    }

    func savedProgressSurvives() throws {
        try withStore { store in
            try store.record([.putTask(StoreFixtures.task(1))])
            let progress = StoreFixtures.task(1, state: .downloading, received: 500)
            #expect(!StoreChange.putTask(progress).isDurable)
            try store.record([.putTask(progress)])
            try store.save()
            let (current, loaded) = try reloaded(store)
            #expect(loaded.tasks == [progress])
            return current
        }
    }

    func compactionKeepsEverything() throws {
        try withStore { store in
            try store.record((0..<50).map { .putTask(StoreFixtures.task($0)) })
            try store.record(
                (0..<50).filter { $0 % 3 == 0 }.map { .removeTask(urlString: StoreFixtures.task($0).urlString) })
            try store.record([.putList(StoreFixtures.list), .setConfiguration(StoreFixtures.configuration)])
            let before = try store.load()
            #expect(before.tasks == (0..<50).filter { $0 % 3 != 0 }.map { StoreFixtures.task($0) })
            #expect(before.lists == ["videos": StoreFixtures.list])
            try store.compact()
            #expect(try store.load() == before)
            try store.compact()
            let (current, loaded) = try reloaded(store)
            #expect(loaded == before)
            return current
        }
    }

    func concurrentRecordersLoseNothing() async throws {
        let store = try open()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<25 { try store.record([.putTask(StoreFixtures.task(worker * 100 + index))]) }
                }
            }
            try await group.waitForAll()
        }
        let (current, loaded) = try reloaded(store)
        defer { try? current.close() }
        #expect(Set(loaded.tasks.map(\.urlString)).count == 100)
    }

    func eachDurabilityCallbackRunsOnce() async throws {
        let store = try open()
        let tally = Tally()
        let count = 40
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<(count / 4) {
                        let number = worker * 100 + index
                        do throws(StoreError) {
                            try store.record([.putTask(StoreFixtures.task(number))]) { error in
                                if let error { tally.errors.withLock { $0.append(error) } }
                                tally.callbacks.withLock { $0[number, default: 0] += 1 }
                            }
                        } catch {
                            tally.errors.withLock { $0.append(error) }
                        }
                    }
                }
            }
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        while tally.callbacks.withLock({ $0.count }) < count, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(tally.errors.withLock { $0 } == [])
        #expect(tally.callbacks.withLock { $0.count } == count, "every durable change reached its callback")
        #expect(tally.callbacks.withLock { $0.values.allSatisfy { $0 == 1 } }, "each callback exactly once")
        let (current, loaded) = try reloaded(store)
        defer { try? current.close() }
        #expect(loaded.tasks.count == count)
    }
}

/// Durability callbacks and errors, counted from many threads.
private final class Tally: Sendable {
    let callbacks = Locked<[Int: Int]>([:])
    let errors = Locked<[StoreError]>([])
}
