import Foundation
import PeregrinePostgresStorage
import PeregrineStorageTestKit
import TestSupport
import Testing

/// The schema's versioned migrations: a fresh database is migrated once, a re-run changes
/// nothing, services starting together migrate once, a newer schema is refused untouched.
@Suite("PostgreSQL schema migrations")
struct PostgresMigrationTests {
    /// The tables and columns of the database, to compare before and after.
    private func layout(_ server: PostgresServer, _ database: String) async throws -> String {
        try await server.psql(
            """
            SELECT table_name || '.' || column_name || ':' || data_type FROM information_schema.columns
            WHERE table_schema = 'public' ORDER BY table_name, ordinal_position
            """, database: database)
    }

    @Test func aFreshDatabaseIsMigratedToTheLatestVersion() async throws {
        let (server, database, connection) = try await SharedPostgres.freshDatabase("fresh")
        let store = try PostgresTaskStore(identifier: "one", connectionString: connection)
        try store.close()
        #expect(
            try await server.psql("SELECT version FROM peregrine_schema ORDER BY version", database: database)
                == "1\n2\n3"
        )
        let tables = try await server.psql(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename", database: database)
        #expect(
            tables.split(separator: "\n") == [
                "peregrine_configuration", "peregrine_list_entries", "peregrine_lists", "peregrine_queues",
                "peregrine_schema",
                "peregrine_stores", "peregrine_tasks", "peregrine_thumbnails",
            ])
    }

    @Test func migratingAgainChangesNothing() async throws {
        let (server, database, connection) = try await SharedPostgres.freshDatabase("rerun")
        let first = try PostgresTaskStore(identifier: "one", connectionString: connection)
        try first.record([.putTask(StoreFixtures.fullTask())])
        try first.close()
        let before = try await layout(server, database)
        let appliedAt = try await server.psql("SELECT applied_at FROM peregrine_schema", database: database)
        for _ in 0..<3 {
            let again = try PostgresTaskStore(identifier: "one", connectionString: connection)
            #expect(try again.load().tasks == [StoreFixtures.fullTask()])
            try again.close()
        }
        #expect(try await layout(server, database) == before)
        #expect(try await server.psql("SELECT applied_at FROM peregrine_schema", database: database) == appliedAt)
    }

    @Test func servicesStartingTogetherMigrateOnce() async throws {
        let (server, database, connection) = try await SharedPostgres.freshDatabase("together")
        let stores = try await withThrowingTaskGroup(of: PostgresTaskStore.self) { group in
            for number in 0..<6 {
                group.addTask { try PostgresTaskStore(identifier: "service-\(number)", connectionString: connection) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(stores.count == 6)
        for store in stores { try store.close() }
        #expect(try await server.psql("SELECT count(*) FROM peregrine_schema", database: database) == "3")
    }

    @Test func aNewerSchemaIsRefusedAndLeftAlone() async throws {
        let (server, database, connection) = try await SharedPostgres.freshDatabase("newer")
        let store = try PostgresTaskStore(identifier: "one", connectionString: connection)
        try store.record([.putTask(StoreFixtures.task(1))])
        try store.close()
        try await server.psql(
            """
            INSERT INTO peregrine_schema (version, summary) VALUES (99, 'from the future');
            ALTER TABLE peregrine_tasks ADD COLUMN future text
            """, database: database)
        let before = try await layout(server, database)
        let rows = try await server.psql("SELECT count(*) FROM peregrine_tasks", database: database)
        let error = #expect(throws: StoreError.self) {
            try PostgresTaskStore(identifier: "one", connectionString: connection)
        }
        #expect(error?.code == .unsupportedVersion)
        #expect(error?.message.contains("version 99") == true)
        #expect(try await layout(server, database) == before)
        #expect(try await server.psql("SELECT count(*) FROM peregrine_tasks", database: database) == rows)
        #expect(try await server.psql("SELECT max(version) FROM peregrine_schema", database: database) == "99")
    }
}
