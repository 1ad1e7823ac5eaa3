import Logging
import PeregrineStorage
import PostgresNIO
import Synchronization

/// One connection to the server, used from the caller's thread: every call sends its statements
/// to the connection's event loop and blocks the calling thread (never an event-loop thread)
/// until the answers are in.
///
/// Not thread-safe: ``PostgresTaskStore`` calls it under its lock.
final class PostgresSession: Sendable {
    let connection: PostgresConnection
    let logger: Logger
    private let location: PostgresStoreLocation

    private static let nextID = Atomic<Int>(1)

    private init(connection: PostgresConnection, location: PostgresStoreLocation, logger: Logger) {
        self.connection = connection
        self.location = location
        self.logger = logger
    }

    /// Connects, within the location's connect timeout.
    ///
    /// - Throws: `StoreError.Code.unavailable` naming the (redacted) location when the server
    ///   cannot be reached or refuses the login.
    static func connect(to location: PostgresStoreLocation, on eventLoop: any EventLoop, logger: Logger)
        throws(StoreError) -> PostgresSession
    {
        var configuration: PostgresConnection.Configuration
        switch location.endpoint {
        case .tcp(let host, let port):
            configuration = .init(
                host: host, port: port, username: location.username, password: location.password,
                database: location.database, tls: .disable)
        case .unixSocket(let directory, let port):
            configuration = .init(
                unixSocketPath: "\(directory)/.s.PGSQL.\(port)", username: location.username,
                password: location.password, database: location.database)
        }
        let components = location.connectTimeout.components
        configuration.options.connectTimeout = .nanoseconds(
            components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
        configuration.options.additionalStartupParameters = [("application_name", location.applicationName)]
        let id = nextID.add(1, ordering: .relaxed).oldValue
        do {
            let connection = try PostgresConnection.connect(
                on: eventLoop, configuration: configuration, id: id, logger: logger
            ).wait()
            return PostgresSession(connection: connection, location: location, logger: logger)
        } catch {
            throw mapError(error, location: location, doing: "cannot connect to", connecting: true)
        }
    }

    /// Whether the connection is known to be gone.
    var isClosed: Bool { connection.isClosed }

    /// Runs one statement outside a transaction and returns its rows.
    func query(_ query: PostgresQuery, doing what: String) throws(StoreError) -> PostgresQueryResult {
        do {
            return try connection.query(query, logger: logger).wait()
        } catch {
            throw Self.mapError(error, location: location, doing: what)
        }
    }

    /// Runs the statements in one transaction, sent together (pipelined) so the whole batch
    /// costs about one round trip, and returns each statement's rows. When one fails, the
    /// server rolls the transaction back and this throws the first failure: nothing of the batch
    /// was written.
    func transaction(
        _ queries: [PostgresQuery], isolation: String = "", doing what: String
    ) throws(StoreError) -> [PostgresQueryResult] {
        var futures = [connection.query(PostgresQuery(unsafeSQL: "BEGIN \(isolation)"), logger: logger)]
        for query in queries { futures.append(connection.query(query, logger: logger)) }
        futures.append(connection.query("COMMIT", logger: logger))
        var results: [PostgresQueryResult] = []
        results.reserveCapacity(futures.count)
        var firstError: (any Error)?
        for future in futures {
            do {
                results.append(try future.wait())
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw Self.mapError(firstError, location: location, doing: what) }
        // A transaction that failed without an error we saw ends in ROLLBACK, not COMMIT.
        guard results.last?.metadata.command == "COMMIT" else {
            throw StoreError(.ioFailed, path: location.description, "\(what): the transaction was rolled back")
        }
        return Array(results.dropFirst().dropLast())
    }

    /// Closes the connection and waits for it.
    func close() {
        _ = try? connection.close().wait()
    }

    /// The `StoreError` for a failure of PostgresNIO: `unavailable` when the connection is gone
    /// (refused, reset, closed by the server, the backend terminated) — the caller may retry on a
    /// new connection — else `ioFailed` with the server's message. Never the password.
    static func mapError(
        _ error: any Error, location: PostgresStoreLocation, doing what: String, connecting: Bool = false
    ) -> StoreError {
        let place = location.description
        guard let error = error as? PSQLError else {
            // NIO's own errors (connection refused, reset, timed out) come unwrapped at times.
            return StoreError(.unavailable, path: place, "\(what) the database: \(error)")
        }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "no message"
            // Class 08: connection exceptions; 57P01…57P03: the backend was terminated or the
            // server is shutting down or starting; 28: authentication failed; 3D000: no such database.
            if state.hasPrefix("08") || state.hasPrefix("57P") || state.hasPrefix("28") || state == "3D000" {
                return StoreError(.unavailable, path: place, "\(what) the database: \(message) (SQLSTATE \(state))")
            }
            return StoreError(.ioFailed, path: place, "\(what) the database: \(message) (SQLSTATE \(state))")
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown:
            let detail = error.underlying.map { ": \($0)" } ?? ""
            return StoreError(.unavailable, path: place, "\(what) the database: the connection is lost\(detail)")
        default:
            if connecting {
                let detail = error.underlying.map { ": \($0)" } ?? ""
                return StoreError(.unavailable, path: place, "\(what) the database: \(error.code)\(detail)")
            }
            return StoreError(.ioFailed, path: place, "\(what) the database: \(error.code)")
        }
    }
}
