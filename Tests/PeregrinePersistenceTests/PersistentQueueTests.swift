import Foundation
import PeregrineEngine
import PeregrineJSONStorage
import PeregrineJournal
import PeregrineMockTransport
import PeregrinePersistence
import PeregrineStorage
import TestSupport
import Testing

/// The engine on a JSON store, without the facade: tasks come back after a restart, an
/// interrupted download goes on with Range, and an ending is on disk when it is announced.
@Suite struct PersistentQueueTests {
    static let url = "http://mock.test/a.bin"

    /// A queue on a manual mock transport (its clock is the engine's) and a JSON store whose
    /// progress waits an hour to be flushed, so that only durable writes reach the disk.
    static func open(_ scratch: TemporaryDirectory, server: MockServer) throws -> (PersistentQueue, MockTransport) {
        let transport = MockTransport(server: server, mode: .manual)
        let store = try JSONTaskStore(
            identifier: "queue",
            configuration: StoreConfiguration(rootDirectory: scratch.path("state"), flushDelay: .seconds(3600)))
        let configuration = DownloadEngine.Configuration(
            directory: scratch.path("downloads"),
            clock: EngineClock(
                now: { transport.now.offset }, date: { Date(timeIntervalSince1970: 1_700_000_000) },
                schedule: { transport.schedule(after: $0, $1) }))
        return (try PersistentQueue(transport: transport, configuration: configuration, store: store), transport)
    }

    /// What a crash now would leave: the store's files as they are, loaded by a second store.
    static func loadAfterCrash(_ scratch: TemporaryDirectory) throws -> StoreSnapshot {
        let copy = scratch.path("crash-\(UUID().uuidString)")
        try StoreFiles.makeDirectories(copy)
        for name in try StoreFiles.names(in: scratch.path("state")) where !name.hasSuffix(".lock") {
            try StoreFiles.copy(scratch.path("state") + "/" + name, to: copy + "/" + name)
        }
        let store = try JSONTaskStore(identifier: "queue", configuration: StoreConfiguration(rootDirectory: copy))
        defer { try? store.close() }
        return try store.load()
    }

    @Test func anEndingIsOnDiskWhenItIsAnnouncedAndComesBackAfterARestart() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-queue")
        defer { scratch.remove() }
        let server = MockServer()
        let body = MockBody.generated(seed: 3, count: 200_000)
        server.setRoute(.file(body, entityTag: .fixed("\"v1\"")), for: "/a.bin")

        do {
            let (queue, transport) = try Self.open(scratch, server: server)
            let events = queue.events()
            #expect(queue.engine.download([DownloadItem(Self.url)]).added == [Self.url])
            transport.runUntilIdle()
            var finished = false
            for await event in events {
                guard case .finished = event else { continue }
                finished = true
                // Announced: a crash now keeps it.
                let crashed = try Self.loadAfterCrash(scratch)
                #expect(crashed.tasks.map(\.state) == [.finished])
                #expect(crashed.tasks.first?.fileName == "a.bin")
                break
            }
            #expect(finished)
            #expect(queue.lastStoreError == nil)
            try queue.close()
        }

        let (reopened, _) = try Self.open(scratch, server: server)
        defer { try? reopened.close() }
        #expect(reopened.restoreResult.restored == [Self.url])
        #expect(reopened.restoreResult.recovered == [])
        #expect(reopened.loadRepairs == [])
        #expect(reopened.engine.state(ofTask: Self.url) == .finished)
        let file = try #require(FileManager.default.contents(atPath: scratch.path("downloads/a.bin")))
        #expect([UInt8](file) == body.bytes(in: 0..<200_000))
        #expect(server.requests(for: "/a.bin").count == 1, "never downloaded twice")
    }

    @Test func anInterruptedDownloadGoesOnWithRangeInTheNextQueue() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-queue")
        defer { scratch.remove() }
        let server = MockServer()
        let count: Int64 = 1_000_000
        let body = MockBody.generated(seed: 5, count: count)
        var route = MockRoute.file(body, entityTag: .fixed("\"v1\""))
        route.bytesPerSecond = 100_000
        server.setRoute(route, for: "/a.bin")

        do {
            let (queue, transport) = try Self.open(scratch, server: server)
            queue.engine.download([DownloadItem(Self.url)])
            transport.advance(by: .seconds(3))
            #expect(queue.engine.state(ofTask: Self.url) == .downloading)
            try queue.close()
            // The stopped transfer ends and lets its partial file go, as a process's exit would.
            transport.runUntilIdle()
        }

        server.setRoute(.file(body, entityTag: .fixed("\"v1\"")), for: "/a.bin")
        let (queue, transport) = try Self.open(scratch, server: server)
        defer { try? queue.close() }
        #expect(queue.restoreResult.restored == [Self.url])
        #expect(queue.engine.state(ofTask: Self.url) == .stopped)
        let kept = try #require(queue.engine.task(Self.url)?.record.resumeRecord?.offset)
        #expect(kept > 0 && kept < count)
        queue.engine.resumeTasks([Self.url])
        transport.runUntilIdle()
        #expect(queue.engine.state(ofTask: Self.url) == .finished)
        let ranges = server.requests(for: "/a.bin").filter { $0.method == "GET" }.map { $0.headers["Range"] }
        #expect(ranges == [nil, "bytes=\(kept)-"])
        let file = try #require(FileManager.default.contents(atPath: scratch.path("downloads/a.bin")))
        #expect([UInt8](file) == body.bytes(in: 0..<count))
    }

    @Test func aFinishedEventWaitsForASlowStore() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-queue")
        defer { scratch.remove() }
        let server = MockServer()
        server.setRoute(.file(MockBody.generated(seed: 3, count: 100_000), entityTag: .fixed("\"v1\"")), for: "/a.bin")
        let transport = MockTransport(server: server, mode: .manual)
        let store = SlowStore()
        let queue = try PersistentQueue(
            transport: transport, configuration: DownloadEngine.Configuration(directory: scratch.path("downloads")),
            store: store)
        defer { try? queue.close() }
        let events = queue.events()
        queue.engine.download([DownloadItem(Self.url)])
        transport.runUntilIdle()
        for await event in events {
            guard case .finished = event else { continue }
            #expect(try store.inner.load().tasks.map(\.state) == [.finished], "announced before the store had it")
            break
        }
    }

    @Test func aStoreThatCannotBeReadIsATypedError() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-queue")
        defer { scratch.remove() }
        try StoreFiles.makeDirectories(scratch.path("state"))
        try Data("not a snapshot".utf8).write(to: URL(fileURLWithPath: scratch.path("state/queue.json")))
        #expect {
            _ = try Self.open(scratch, server: MockServer())
        } throws: { error in
            guard let error = error as? PersistentQueueError, case .store(let cause) = error else { return false }
            return cause.code == .corrupt
        }
    }
}

/// A store whose durable writes take 100 ms, in order, on a queue of their own: what the
/// inner store holds lags behind what was recorded.
final class SlowStore: TaskStore {
    let inner = InMemoryTaskStore(identifier: "slow")
    private let queue = DispatchQueue(label: "slow-store")
    var identifier: String { inner.identifier }

    func load() throws(StoreError) -> StoreSnapshot {
        queue.sync {}
        return try inner.load()
    }

    func record(_ changes: [StoreChange]) throws(StoreError) {
        queue.async { [inner] in try? inner.record(changes) }
    }

    func record(_ changes: [StoreChange], whenDurable: @escaping @Sendable (StoreError?) -> Void) throws(StoreError) {
        queue.async { [inner] in
            usleep(100_000)
            try? inner.record(changes)
            whenDurable(nil)
        }
    }

    func save() throws(StoreError) { queue.sync {} }
    func compact() throws(StoreError) {}
    func close() throws(StoreError) {
        queue.sync {}
        try inner.close()
    }
}
