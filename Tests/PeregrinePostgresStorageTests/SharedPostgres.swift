import PeregrineCore
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One PostgreSQL server for every test of this target (initdb costs seconds), started on first
/// use and stopped when the test process exits; each test takes fresh databases or store
/// identifiers of its own.
enum SharedPostgres {
    private static let started = Task<PostgresServer, any Error> {
        let server = try PostgresServer()
        try await server.start()
        running.withLock { $0 = server }
        atexit { SharedPostgres.running.withLock { $0?.stop() } }
        return server
    }

    /// The server, for the exit handler.
    static let running = Locked<PostgresServer?>(nil)

    private static let counter = Atomic<Int>(0)

    /// The running server.
    static func server() async throws -> PostgresServer {
        try await started.value
    }

    /// A name no other test in this process uses.
    static func uniqueName(_ prefix: String) -> String {
        "\(prefix)_\(getpid())_\(counter.add(1, ordering: .relaxed).newValue)"
    }

    /// A fresh, empty database and its TCP connection string (with the superuser's password).
    static func freshDatabase(_ prefix: String = "test", applicationName: String? = nil) async throws -> (
        server: PostgresServer, database: String, connectionString: String
    ) {
        let server = try await server()
        let database = uniqueName(prefix)
        try await server.createDatabase(database)
        var connection = server.connectionString(database: database)
        if let applicationName { connection += "?application_name=\(applicationName)" }
        return (server, database, connection)
    }

    /// The database all conformance checks share (each with its own store identifier).
    static func sharedDatabase() async throws -> (server: PostgresServer, connectionString: String) {
        let server = try await server()
        try await sharedDatabaseMade.value
        return (server, server.connectionString(database: "conformance"))
    }

    private static let sharedDatabaseMade = Task<Void, any Error> {
        try await server().createDatabase("conformance")
    }
}
