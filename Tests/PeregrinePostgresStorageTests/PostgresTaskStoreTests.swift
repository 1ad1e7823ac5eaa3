import Foundation
import PeregrinePostgresStorage
import PeregrineStorageTestKit
import Synchronization
import TestSupport
import Testing

/// The store conformance suite on a real PostgreSQL, and what is particular to this store:
/// lists written as their changed rows, the identifier lock, a socket connection.
@Suite("PostgresTaskStore")
struct PostgresTaskStoreTests {
    @Test(arguments: TaskStoreConformance.checks)
    func conformsToTheStoreContract(_ check: TaskStoreConformance.Check) async throws {
        let (_, connection) = try await SharedPostgres.sharedDatabase()
        let identifier = SharedPostgres.uniqueName("conformance")
        let conformance = TaskStoreConformance(reopening: {
            try PostgresTaskStore(identifier: identifier, connectionString: connection)
        })
        try await conformance.run(check)
    }

    @Test func connectsThroughAUnixSocketDirectory() async throws {
        let (server, database, _) = try await SharedPostgres.freshDatabase("socket")
        let connection = server.socketConnectionString(database: database)
        let location = try PostgresStoreLocation(parsing: connection)
        #expect(location.endpoint == .unixSocket(directory: server.socketDirectory, port: server.port))
        let store = try PostgresTaskStore(identifier: "socket", location: location)
        try store.record([.putTask(StoreFixtures.task(1))])
        #expect(try store.load().tasks == [StoreFixtures.task(1)])
        try store.close()
    }

    @Test func oneChangedItemInTenThousandWritesOnlyItsRows() async throws {
        let (_, connection) = try await SharedPostgres.sharedDatabase()
        let identifier = SharedPostgres.uniqueName("bigList")
        let store = try PostgresTaskStore(identifier: identifier, connectionString: connection)
        var list = StoredList(identifier: "", sections: [(0..<10_000).map { "https://example.com/\($0).bin" }])
        try store.record([.putList(list)])
        let afterFirst = store.statistics
        #expect(afterFirst.listRowsWritten == 10_000)

        list.sections[0][5_000] = "https://example.com/changed.bin"
        try store.record([.putList(list)])
        #expect(store.statistics.listRowsWritten - afterFirst.listRowsWritten == 2, "one row out, one row in")
        #expect(store.statistics.listSettingsWritten == afterFirst.listSettingsWritten, "settings unchanged")

        // One edit per change, as the facade sends them: each costs its own rows.
        list.sections[0].insert("https://example.com/inserted.bin", at: 1)
        try store.record([.putList(list)])
        list.sections[0].append("https://example.com/last.bin")
        try store.record([.putList(list)])
        list.trash = ["https://example.com/gone.bin"]
        try store.record([.putList(list)])
        list.sections[0].removeFirst()
        try store.record([.putList(list)])
        #expect(store.statistics.listRowsWritten - afterFirst.listRowsWritten == 2 + 1 + 1 + 1 + 1)
        #expect(try store.load().lists == ["": list])

        // A new store object reads the rows back in order; so does one that writes first.
        try store.close()
        let reopened = try PostgresTaskStore(identifier: identifier, connectionString: connection)
        list.sections[0][9_999] = "https://example.com/changed-again.bin"
        try reopened.record([.putList(list)])
        #expect(reopened.statistics.listRowsWritten == 2)
        #expect(try reopened.load().lists == ["": list])
        try reopened.close()
    }

    @Test func aSecondStoreOnTheSameIdentifierIsLocked() async throws {
        let (_, connection) = try await SharedPostgres.sharedDatabase()
        let identifier = SharedPostgres.uniqueName("locked")
        let first = try PostgresTaskStore(identifier: identifier, connectionString: connection)
        let error = #expect(throws: StoreError.self) {
            try PostgresTaskStore(identifier: identifier, connectionString: connection)
        }
        #expect(error?.code == .locked)
        try first.close()
        let second = try PostgresTaskStore(identifier: identifier, connectionString: connection)
        try second.close()
    }

    @Test func progressOnlyBatchesAreSavedBySave() async throws {
        let (_, connection) = try await SharedPostgres.sharedDatabase()
        let identifier = SharedPostgres.uniqueName("progress")
        let store = try PostgresTaskStore(identifier: identifier, connectionString: connection)
        try store.record([.putTask(StoreFixtures.task(1))])
        for received in stride(from: Int64(100), through: 1_000, by: 100) {
            try store.record([.putTask(StoreFixtures.task(1, state: .downloading, received: received))])
        }
        try store.save()
        try store.close()
        let reopened = try PostgresTaskStore(identifier: identifier, connectionString: connection)
        #expect(try reopened.load().tasks == [StoreFixtures.task(1, state: .downloading, received: 1_000)])
        try reopened.close()
    }

    @Test func anEmptyIdentifierIsRefused() async throws {
        let (_, connection) = try await SharedPostgres.sharedDatabase()
        let error = #expect(throws: StoreError.self) {
            try PostgresTaskStore(identifier: "", connectionString: connection)
        }
        #expect(error?.code == .invalidIdentifier)
    }
}
