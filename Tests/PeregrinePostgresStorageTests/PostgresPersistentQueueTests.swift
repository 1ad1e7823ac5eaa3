import Foundation
import PeregrineEngine
import PeregrineMockTransport
import PeregrinePersistence
import PeregrinePostgresStorage
import TestSupport
import Testing

/// The store under its real caller: the engine's persistence layer records from the engine's
/// and the transport's threads, and a queue reopened on the same database gets its tasks back.
@Suite("PersistentQueue on PostgreSQL")
struct PostgresPersistentQueueTests {
    @Test func aQueueOnPostgreSQLGetsItsFinishedTasksBackAfterARestart() async throws {
        let (_, connection) = try await SharedPostgres.sharedDatabase()
        let identifier = SharedPostgres.uniqueName("queue")
        let scratch = try TemporaryDirectory(prefix: "peregrine-pg-queue")
        defer { scratch.remove() }
        let server = MockServer()
        let urls = (0..<20).map { "http://mock.test/\($0).bin" }
        for number in 0..<20 {
            server.setRoute(.file(.generated(seed: UInt64(number), count: 10_000)), for: "/\(number).bin")
        }
        func open() throws -> (PersistentQueue, MockTransport) {
            let transport = MockTransport(server: server, mode: .manual)
            let store = try PostgresTaskStore(identifier: identifier, connectionString: connection)
            let configuration = DownloadEngine.Configuration(
                directory: scratch.path("downloads"),
                clock: EngineClock(
                    now: { transport.now.offset }, date: { Date(timeIntervalSince1970: 1_700_000_000) },
                    schedule: { transport.schedule(after: $0, $1) }))
            return (try PersistentQueue(transport: transport, configuration: configuration, store: store), transport)
        }

        do {
            let (queue, transport) = try open()
            let events = queue.events()
            #expect(queue.engine.download(urls.map { DownloadItem($0) }).added == urls)
            transport.runUntilIdle()
            var finished: Set<String> = []
            for await event in events {
                if case .finished(let url, _) = event { finished.insert(url) }
                if finished.count == urls.count { break }
            }
            #expect(queue.lastStoreError == nil)
            try queue.close()
        }

        let (reopened, _) = try open()
        defer { try? reopened.close() }
        #expect(Set(reopened.restoreResult.restored) == Set(urls))
        for url in urls { #expect(reopened.engine.state(ofTask: url) == .finished) }
    }
}
