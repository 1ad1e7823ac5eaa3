import Logging
import PeregrineCore
import PeregrineStorage
import PostgresNIO
import Synchronization

/// One connection to the server, used from the caller's thread: every call sends its statements
/// to the connection's event loop and blocks the calling thread (never an event-loop thread)
/// until the answers are in.
///
/// Not thread-safe: ``PostgresTaskStore`` calls it under its lock.
///
/// Every call has a deadline (``deadline``): a server that does not answer in time — a network
/// that drops packets without resetting anything — gets its connection closed, which fails the
/// call with `unavailable` as a lost connection does, and the caller connects again.
final class PostgresSession: Sendable {
    let connection: PostgresConnection
    let logger: Logger
    private let location: PostgresStoreLocation
    private let deadlineNanoseconds: Atomic<Int64>
    /// When the last probe was sent, and whether it is still unanswered (``probe(every:onLost:)``).
    private let probes = Locked<(last: ContinuousClock.Instant?, pending: Bool)>((nil, false))

    private static let nextID = Atomic<Int>(1)

    private init(connection: PostgresConnection, location: PostgresStoreLocation, logger: Logger, deadline: Duration) {
        self.connection = connection
        self.location = location
        self.logger = logger
        deadlineNanoseconds = Atomic(Self.nanoseconds(deadline))
    }

    /// How long a call (a statement, a transaction's batch, the close) may wait for the server.
    var deadline: Duration {
        get { .nanoseconds(deadlineNanoseconds.load(ordering: .relaxed)) }
        set { deadlineNanoseconds.store(Self.nanoseconds(newValue), ordering: .relaxed) }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let components = duration.components
        return max(1, components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
    }

    /// How long the server keeps a transaction whose client stopped sending (see `connect`).
    static let idleInTransactionTimeout = "10s"

    /// Connects, within the location's connect timeout: the TCP connection and the login both
    /// (a server that accepts but never answers the startup is a failed connect).
    ///
    /// - Parameter deadline: the deadline of each later call, and of this connect when shorter
    ///   than the connect timeout (a reconnect waits no longer than a call would); the connect
    ///   timeout when nil.
    /// - Throws: `StoreError.Code.unavailable` naming the (redacted) location when the server
    ///   cannot be reached, does not answer in time or refuses the login.
    static func connect(
        to location: PostgresStoreLocation, on eventLoop: any EventLoop, logger: Logger, deadline: Duration? = nil
    ) throws(StoreError) -> PostgresSession {
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
        let bound = deadline.map { min($0, location.connectTimeout) } ?? location.connectTimeout
        let components = bound.components
        configuration.options.connectTimeout = .nanoseconds(
            components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
        configuration.options.additionalStartupParameters = [
            ("application_name", location.applicationName),
            // Every transaction is sent whole, so it waits for its client only while that client
            // is frozen (stopped, paused, cut off) between two of its statements: then the
            // server ends it rather than let its locks (a claim's turn of the queue, rows) stop
            // every other service of the fleet.
            ("idle_in_transaction_session_timeout", Self.idleInTransactionTimeout),
        ]
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let connecting = PostgresConnection.connect(on: eventLoop, configuration: configuration, id: id, logger: logger)
        // The connect timeout covers the TCP connection only: the login gets the same bound.
        let answered = eventLoop.makePromise(of: PostgresConnection.self)
        let late = eventLoop.scheduleTask(in: .nanoseconds(nanoseconds(bound))) {
            answered.fail(DeadlineExceeded())
        }
        connecting.whenComplete { result in
            late.cancel()
            answered.completeWith(result)
        }
        // A login that answers after the deadline is closed at once: nobody uses it.
        answered.futureResult.whenFailure { _ in
            connecting.whenSuccess { connection in
                let _: EventLoopFuture<Void> = connection.close()
            }
        }
        do {
            let connection = try answered.futureResult.wait()
            return PostgresSession(
                connection: connection, location: location, logger: logger,
                deadline: deadline ?? location.connectTimeout)
        } catch is DeadlineExceeded {
            throw StoreError(
                .unavailable, path: location.description,
                "cannot connect to the database: no answer within \(bound)")
        } catch {
            throw mapError(error, location: location, doing: "cannot connect to", connecting: true)
        }
    }

    /// A call got no answer within its deadline.
    private struct DeadlineExceeded: Error {}

    /// Whether the connection is known to be gone.
    var isClosed: Bool { connection.isClosed }

    /// Waits for `futures` (sent together) within the deadline; past it the connection is
    /// closed, which fails whatever is still pending. Returns each result in order.
    private func answers<T: Sendable>(
        _ futures: [EventLoopFuture<T>], doing what: String
    ) throws(StoreError) -> [Result<T, any Error>] {
        let timedOut = Atomic(false)
        let connection = self.connection
        let timer = connection.eventLoop.scheduleTask(in: .nanoseconds(deadlineNanoseconds.load(ordering: .relaxed))) {
            timedOut.store(true, ordering: .relaxed)
            let _: EventLoopFuture<Void> = connection.close()
        }
        defer { timer.cancel() }
        let results = futures.map { future -> Result<T, any Error> in
            do {
                return .success(try future.wait())
            } catch {
                return .failure(error)
            }
        }
        if timedOut.load(ordering: .relaxed), results.contains(where: { if case .failure = $0 { true } else { false } })
        {
            throw StoreError(
                .unavailable, path: location.description,
                "\(what) the database: no answer within \(deadline); the connection was dropped")
        }
        return results
    }

    /// Runs one statement outside a transaction and returns its rows.
    func query(_ query: PostgresQuery, doing what: String) throws(StoreError) -> PostgresQueryResult {
        switch try answers([connection.query(query, logger: logger)], doing: what)[0] {
        case .success(let result): return result
        case .failure(let error): throw Self.mapError(error, location: location, doing: what)
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
        for answer in try answers(futures, doing: what) {
            switch answer {
            case .success(let result): results.append(result)
            case .failure(let error): if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw Self.mapError(firstError, location: location, doing: what) }
        // A transaction that failed without an error we saw ends in ROLLBACK, not COMMIT.
        guard results.last?.metadata.command == "COMMIT" else {
            throw StoreError(.ioFailed, path: location.description, "\(what): the transaction was rolled back")
        }
        return Array(results.dropFirst().dropLast())
    }

    /// Asks the server for a trivial answer without waiting for it, at most once per
    /// `interval`: a connection that does not answer within its ``deadline`` is closed as a lost
    /// one, and `onLost` runs. For a connection that only listens for notifications, which
    /// nothing else would find gone when the network drops its packets.
    func probe(every interval: Duration, onLost: @escaping @Sendable () -> Void) {
        let now = ContinuousClock.now
        let due = probes.withLock { probes -> Bool in
            guard !probes.pending, probes.last.map({ now - $0 >= interval }) ?? true else { return false }
            probes = (now, true)
            return true
        }
        guard due else { return }
        let connection = self.connection
        let lost = Atomic(false)
        let timer = connection.eventLoop.scheduleTask(in: .nanoseconds(deadlineNanoseconds.load(ordering: .relaxed))) {
            lost.store(true, ordering: .relaxed)
            let _: EventLoopFuture<Void> = connection.close()
        }
        connection.query("SELECT 1", logger: logger).whenComplete { [self] _ in
            timer.cancel()
            probes.withLock { $0.pending = false }
            if lost.load(ordering: .relaxed) { onLost() }
        }
    }

    /// Closes the connection and waits for it, within the deadline (a server that does not
    /// answer is left behind: the channel closes without it).
    func close() {
        let closing: EventLoopFuture<Void> = connection.close()
        _ = try? answers([closing], doing: "cannot close the connection to")
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
