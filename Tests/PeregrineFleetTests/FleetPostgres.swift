import PeregrineCore
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One PostgreSQL server for every test of this target, started on first use and stopped when
/// the test process exits; each test takes a fresh database.
enum FleetPostgres {
    private static let started = Task<PostgresServer, any Error> {
        let server = try PostgresServer()
        try await server.start()
        running.withLock { $0 = server }
        atexit { FleetPostgres.running.withLock { $0?.stop() } }
        return server
    }

    /// The server, for the exit handler.
    static let running = Locked<PostgresServer?>(nil)

    private static let counter = Atomic<Int>(0)

    /// A name no other test in this process uses.
    static func uniqueName(_ prefix: String) -> String {
        "\(prefix)_\(getpid())_\(counter.add(1, ordering: .relaxed).newValue)"
    }

    /// A fresh, empty database and its TCP connection string (with the superuser's password).
    static func freshDatabase(_ prefix: String) async throws -> (
        server: PostgresServer, database: String, connectionString: String
    ) {
        let server = try await started.value
        let database = uniqueName(prefix)
        try await server.createDatabase(database)
        return (server, database, server.connectionString(database: database))
    }
}
