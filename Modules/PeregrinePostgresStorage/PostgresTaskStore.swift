import Logging
import PeregrineCore
@_exported import PeregrineStorage
import PostgresNIO
import Synchronization

/// A `TaskStore` that keeps a manager's state in PostgreSQL, for a queue that outlives one
/// machine's disk (issue 20).
///
/// Rows, in the connection's default schema (`PostgresSchema` migrates them when a store
/// opens): `peregrine_tasks` (one per task, keyed by store identifier and URL, with the order
/// of first addition, the state and the received length as columns and the full record as the
/// JSON store's text), `peregrine_lists` with `peregrine_list_entries` (one row per URL of a
/// list, with gapped positions, so a list change writes only the rows that changed: see
/// `ListOrder`), `peregrine_configuration`, `peregrine_thumbnails`, and `peregrine_stores`.
///
/// **Threads.** The protocol is synchronous, and so is this store: each call sends its
/// statements to a connection running on an event loop the store owns (one thread of its own
/// `MultiThreadedEventLoopGroup`) and blocks the *calling* thread until the server answered.
/// No event-loop thread ever waits, so nothing can deadlock NIO; do not call the store from
/// inside an event loop (NIO traps that in debug builds). Calls are serialised by a lock: one
/// connection, one call at a time.
///
/// **Durability.** ``record(_:)`` commits one transaction per call, its statements pipelined
/// (one round trip for the batch). A durable change is committed with the server's
/// `synchronous_commit` before the call returns; a batch of progress only (no durable change)
/// commits with `synchronous_commit = off`, so the server writes it within its WAL writer delay
/// (200 ms by default) — the `flushDelay` of the file stores. ``save()`` forces that out.
///
/// **Failures.** A server that cannot be reached when the store opens, a refused login and a
/// missing database throw `StoreError.Code.unavailable` naming the connection string with its
/// password redacted. A connection lost while running (the server restarted, the backend was
/// terminated, the network failed) makes the call that met it throw `unavailable`: its
/// transaction was rolled back, nothing of it was written, the caller still holds its state and
/// may record it again. The next call connects again (once, within the connect timeout).
///
/// **One writer per identifier.** The store holds a session advisory lock on its identifier
/// while connected: a second store object (in any process) with the same identifier gets
/// `StoreError.Code.locked`, as with the file stores' `flock`. Services that share one queue
/// use ``PostgresClaimingQueue`` on these tables instead.
public final class PostgresTaskStore: TaskStore {
    public let identifier: String
    /// Where the data lives (its description redacts the password).
    public let location: PostgresStoreLocation

    private let group: MultiThreadedEventLoopGroup
    private let logger: Logger
    private let state: Locked<State>

    private struct State {
        var session: PostgresSession?
        /// The lists as stored, once read or written: what the next change of each is compared with.
        var lists: [String: CachedList] = [:]
        var isClosed = false
        var statistics = PostgresStoreStatistics()
        /// A batch was committed without waiting for the WAL flush since the last flush.
        var hasUnflushedProgress = false
    }

    private struct CachedList {
        var settings: String
        var order: ListOrder
    }

    /// Opens the store of `identifier` in the database at `location`: connects, brings the
    /// schema to this version, and takes the identifier's lock.
    ///
    /// - Throws: `StoreError` with the redacted connection string as its path:
    ///   `.invalidIdentifier` for an empty identifier; `.unavailable` when the server cannot be
    ///   reached or refuses the login; `.unsupportedVersion` when the schema is newer than this
    ///   code (the database is not changed); `.locked` when another store holds the identifier.
    public init(identifier: String, location: PostgresStoreLocation, logger: Logger? = nil) throws(StoreError) {
        guard !identifier.isEmpty else {
            throw StoreError(.invalidIdentifier, path: location.description, "a store identifier cannot be empty")
        }
        self.identifier = identifier
        self.location = location
        var logger = logger ?? Logger(label: "peregrine.postgres-store")
        logger[metadataKey: "store"] = "\(identifier)"
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        state = Locked(State())
        do throws(StoreError) {
            let session = try PostgresSession.connect(to: location, on: group.next(), logger: logger)
            do throws(StoreError) {
                try Self.migrate(session, location: location, logger: logger)
                try Self.lockIdentifier(identifier, session: session, location: location)
            } catch {
                session.close()
                throw error
            }
            state.withLock { $0.session = session }
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
    }

    /// Opens the store at a connection string (`postgresql://user:pass@host:port/db`, see
    /// ``PostgresStoreLocation``).
    public convenience init(identifier: String, connectionString: String, logger: Logger? = nil)
        throws(StoreError)
    {
        try self.init(
            identifier: identifier, location: PostgresStoreLocation(parsing: connectionString), logger: logger)
    }

    deinit {
        let session = state.withLock { state in
            defer { state.session = nil }
            return state.session
        }
        if let session {
            let closed: EventLoopFuture<Void> = session.connection.close()
            closed.whenComplete { _ in }
        }
        group.shutdownGracefully { _ in }
    }

    /// What the store wrote so far: rows per kind, for tests and benchmarks.
    public var statistics: PostgresStoreStatistics { state.withLock { $0.statistics } }

    // MARK: TaskStore

    public func load() throws(StoreError) -> StoreSnapshot {
        try withSession(doing: "cannot load the store \(identifier) from") { session, state throws(StoreError) in
            let key = identifier
            let results = try session.transaction(
                [
                    "SELECT record FROM peregrine_tasks WHERE store = \(key) ORDER BY added_order",
                    "SELECT list, settings FROM peregrine_lists WHERE store = \(key)",
                    """
                    SELECT list, position, section, url FROM peregrine_list_entries
                    WHERE store = \(key) ORDER BY list, position
                    """,
                    "SELECT record FROM peregrine_configuration WHERE store = \(key)",
                    "SELECT url, record FROM peregrine_thumbnails WHERE store = \(key)",
                ], isolation: "ISOLATION LEVEL REPEATABLE READ READ ONLY",
                doing: "cannot load the store \(identifier) from")
            var snapshot = StoreSnapshot()
            var entries: [String: [ListOrder.Entry]] = [:]
            var settings: [String: String] = [:]
            do {
                for row in results[0].rows {
                    guard case .putTask(let task) = try decodeRecord(row.decode(String.self)) else {
                        throw corrupt("a task row holds another record")
                    }
                    snapshot.tasks.append(task)
                }
                for row in results[1].rows {
                    let (list, text) = try row.decode((String, String).self)
                    settings[list] = text
                }
                for row in results[2].rows {
                    let (list, position, section, url) = try row.decode((String, Int64, Int32, String).self)
                    entries[list, default: []].append(ListOrder.Entry(position: position, section: section, url: url))
                }
                if let row = results[3].rows.first {
                    guard case .setConfiguration(let configuration) = try decodeRecord(row.decode(String.self)) else {
                        throw corrupt("the configuration row holds another record")
                    }
                    snapshot.configuration = configuration
                }
                for row in results[4].rows {
                    let (url, text) = try row.decode((String, String).self)
                    guard case .setCustomThumbnail(_, let thumbnail?) = try decodeRecord(text) else {
                        throw corrupt("a thumbnail row holds another record")
                    }
                    snapshot.customThumbnails[url] = thumbnail
                }
            } catch let error as StoreError {
                throw error
            } catch {
                throw corrupt("a row cannot be read: \(error)")
            }
            var lists: [String: CachedList] = [:]
            for (identifier, text) in settings {
                guard case .putList(var list) = try decodeRecord(text) else {
                    throw corrupt("the settings of list \(identifier) hold another record")
                }
                let order = ListOrder(entries: entries[identifier] ?? [])
                (list.sections, list.trash) = order.sectionsAndTrash(sectionCount: list.sections.count)
                snapshot.lists[identifier] = list
                lists[identifier] = CachedList(settings: text, order: order)
            }
            state.lists = lists
            return snapshot
        }
    }

    public func record(_ changes: [StoreChange]) throws(StoreError) {
        guard !changes.isEmpty else {
            try state.withLock { state throws(StoreError) in try checkOpen(state) }
            return
        }
        try withSession(doing: "cannot record \(changes.count) changes of \(identifier) in") {
            session, state throws(StoreError) in
            var statements: [PostgresQuery] = []
            var lists = state.lists
            var statistics = state.statistics
            let durable = changes.contains(where: \.isDurable)
            if !durable { statements.append("SET LOCAL synchronous_commit = off") }
            var index = changes.startIndex
            while index < changes.endIndex {
                var end = index + 1
                switch changes[index] {
                case .putTask:
                    while end < changes.endIndex, case .putTask = changes[end] { end += 1 }
                    statements.append(putTasks(changes[index..<end], statistics: &statistics))
                case .removeTask:
                    while end < changes.endIndex, case .removeTask = changes[end] { end += 1 }
                    let urls = changes[index..<end].compactMap { change -> String? in
                        if case .removeTask(let url) = change { return url }
                        return nil
                    }
                    statements.append("DELETE FROM peregrine_tasks WHERE store = \(identifier) AND url = ANY(\(urls))")
                    statements.append(
                        "DELETE FROM peregrine_thumbnails WHERE store = \(identifier) AND url = ANY(\(urls))")
                    statistics.taskRowsDeleted += urls.count
                case .putList(let list):
                    let cached: CachedList?
                    if let known = lists[list.identifier] {
                        cached = known
                    } else {
                        cached = try readList(list.identifier, session: session)
                    }
                    let settings = PostgresRecordCoding.settingsText(list)
                    if settings != cached?.settings {
                        statements.append(
                            """
                            INSERT INTO peregrine_lists (store, list, settings) VALUES (\(identifier), \(list.identifier), \(settings))
                            ON CONFLICT (store, list) DO UPDATE SET settings = EXCLUDED.settings
                            """)
                        statistics.listSettingsWritten += 1
                    }
                    let (change, order) = (cached?.order ?? ListOrder(entries: [])).change(to: list)
                    statements += entryStatements(change, list: list.identifier)
                    statistics.listRowsWritten += change.rowsTouched
                    lists[list.identifier] = CachedList(settings: settings, order: order)
                case .removeList(let list):
                    statements.append("DELETE FROM peregrine_lists WHERE store = \(identifier) AND list = \(list)")
                    statements.append(
                        "DELETE FROM peregrine_list_entries WHERE store = \(identifier) AND list = \(list)")
                    lists[list] = CachedList(settings: "", order: ListOrder(entries: []))
                case .setConfiguration:
                    let text = PostgresRecordCoding.text(changes[index])
                    statements.append(
                        """
                        INSERT INTO peregrine_configuration (store, record) VALUES (\(identifier), \(text))
                        ON CONFLICT (store) DO UPDATE SET record = EXCLUDED.record
                        """)
                case .setCustomThumbnail(let url, let thumbnail):
                    if thumbnail == nil {
                        statements.append(
                            "DELETE FROM peregrine_thumbnails WHERE store = \(identifier) AND url = \(url)")
                    } else {
                        let text = PostgresRecordCoding.text(changes[index])
                        statements.append(
                            """
                            INSERT INTO peregrine_thumbnails (store, url, record) VALUES (\(identifier), \(url), \(text))
                            ON CONFLICT (store, url) DO UPDATE SET record = EXCLUDED.record
                            """)
                    }
                }
                index = end
            }
            _ = try session.transaction(statements, doing: "cannot record \(changes.count) changes of \(identifier) in")
            statistics.transactions += 1
            // Only now does the cache follow what was written: a failed batch wrote nothing.
            for (list, cached) in lists where cached.settings.isEmpty { lists[list] = nil }
            state.lists = lists
            state.statistics = statistics
            if !durable { state.hasUnflushedProgress = true } else { state.hasUnflushedProgress = false }
        }
    }

    public func save() throws(StoreError) {
        try withSession(doing: "cannot save the store \(identifier) in") { session, state throws(StoreError) in
            // A committed write with synchronous_commit on flushes the WAL up to it, and with it
            // every progress batch committed earlier without waiting.
            guard state.hasUnflushedProgress else { return }
            _ = try session.transaction(
                ["UPDATE peregrine_stores SET saved_at = now() WHERE store = \(identifier)"],
                doing: "cannot save the store \(identifier) in")
            state.hasUnflushedProgress = false
        }
    }

    /// Nothing to fold: the rows are the state. PostgreSQL's autovacuum reclaims the space of
    /// replaced rows. Throws `closed` after ``close()``, like every store.
    public func compact() throws(StoreError) {
        try state.withLock { state throws(StoreError) in try checkOpen(state) }
    }

    public func close() throws(StoreError) {
        let session = state.withLock { state -> PostgresSession? in
            guard !state.isClosed else { return nil }
            state.isClosed = true
            defer { state.session = nil }
            return state.session
        }
        if let session {
            // Every change was committed already; flushing progress is best effort here (a
            // lost connection at close must not keep the store open).
            // The identifier's lock is released here, not when the server notices the closed
            // connection: a store opened right after this one returns must find it free.
            if !session.isClosed {
                _ = try? session.query(
                    "UPDATE peregrine_stores SET saved_at = now() WHERE store = \(identifier)",
                    doing: "cannot save the store \(identifier) in")
                _ = try? session.query(
                    "SELECT pg_advisory_unlock(\(PostgresSchema.storeLockClass), hashtext(\(identifier)))",
                    doing: "cannot close the store \(identifier) in")
            }
            session.close()
        }
        do {
            try group.syncShutdownGracefully()
        } catch {
            // Already shut down: a second close.
        }
    }

    // MARK: Connection

    /// Runs `body` with a live session under the lock: connects again when the last one was
    /// lost. A failure that lost the connection drops it (the next call reconnects) and forgets
    /// the cached lists (the server may or may not have committed the last batch).
    private func withSession<Result: Sendable>(
        doing what: String, _ body: (PostgresSession, inout State) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        try state.withLock { state throws(StoreError) -> Result in
            try checkOpen(state)
            let session: PostgresSession
            if let current = state.session, !current.isClosed {
                session = current
            } else {
                if let stale = state.session {
                    stale.close()
                    state.session = nil
                    state.lists = [:]
                }
                logger.notice("connecting again to \(location)")
                session = try PostgresSession.connect(to: location, on: group.next(), logger: logger)
                do throws(StoreError) {
                    try Self.lockIdentifier(identifier, session: session, location: location)
                } catch {
                    session.close()
                    throw error
                }
                state.session = session
                state.statistics.reconnections += 1
            }
            do throws(StoreError) {
                return try body(session, &state)
            } catch {
                if error.code == .unavailable || session.isClosed {
                    logger.warning("lost the connection to \(location): \(error.message)")
                    session.close()
                    state.session = nil
                    state.lists = [:]
                }
                throw error
            }
        }
    }

    private func checkOpen(_ state: State) throws(StoreError) {
        guard !state.isClosed else {
            throw StoreError(.closed, path: location.description, "the store \(identifier) is closed")
        }
    }

    /// Brings the schema to ``PostgresSchema/latestVersion`` under the migration lock, or refuses
    /// a newer one without changing anything.
    static func migrate(_ session: PostgresSession, location: PostgresStoreLocation, logger: Logger)
        throws(StoreError)
    {
        let what = "cannot migrate the schema of"
        _ = try session.query("BEGIN", doing: what)
        do throws(StoreError) {
            _ = try session.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))", doing: what)
            _ = try session.query(PostgresQuery(unsafeSQL: PostgresSchema.versionTable), doing: what)
            let rows = try session.query("SELECT coalesce(max(version), 0) FROM peregrine_schema", doing: what)
            let current: Int32
            do {
                current = try rows.rows.first?.decode(Int32.self) ?? 0
            } catch {
                throw StoreError(.corrupt, path: location.description, "\(what) the database: \(error)")
            }
            guard current <= PostgresSchema.latestVersion else {
                throw StoreError(
                    .unsupportedVersion, path: location.description,
                    "the database's schema is at version \(current), newer than this program's "
                        + "\(PostgresSchema.latestVersion): use a newer Peregrine; the schema was not changed")
            }
            for migration in PostgresSchema.migrations where migration.version > current {
                for statement in migration.statements {
                    _ = try session.query(PostgresQuery(unsafeSQL: statement), doing: what)
                }
                _ = try session.query(
                    "INSERT INTO peregrine_schema (version, summary) VALUES (\(migration.version), \(migration.summary))",
                    doing: what)
                logger.info("migrated \(location) to schema version \(migration.version): \(migration.summary)")
            }
            _ = try session.query("COMMIT", doing: what)
        } catch {
            _ = try? session.query("ROLLBACK", doing: what)
            throw error
        }
    }

    /// Takes the identifier's session lock and registers the store.
    private static func lockIdentifier(_ identifier: String, session: PostgresSession, location: PostgresStoreLocation)
        throws(StoreError)
    {
        let what = "cannot open the store \(identifier) in"
        // Wait a little for the lock: a store closed or a connection lost a moment ago may still
        // hold it until its server process has ended.
        _ = try session.query("SET lock_timeout = '2s'", doing: what)
        do {
            _ = try session.connection.query(
                "SELECT pg_advisory_lock(\(PostgresSchema.storeLockClass), hashtext(\(identifier)))",
                logger: session.logger
            ).wait()
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
            throw StoreError(
                .locked, path: location.description,
                "the store \(identifier) is open in another process or store object; close that one first")
        } catch {
            throw PostgresSession.mapError(error, location: location, doing: what)
        }
        _ = try session.query("RESET lock_timeout", doing: what)
        _ = try session.query(
            "INSERT INTO peregrine_stores (store) VALUES (\(identifier)) ON CONFLICT (store) DO UPDATE SET opened_at = now()",
            doing: what)
    }

    // MARK: Statements

    /// One upsert for a run of task puts: a task keeps the order of its first addition, a later
    /// put of the same URL in the run replaces the record.
    private func putTasks(_ changes: ArraySlice<StoreChange>, statistics: inout PostgresStoreStatistics)
        -> PostgresQuery
    {
        var slots: [String: Int] = [:]
        var tasks: [StoredTask] = []
        tasks.reserveCapacity(changes.count)
        for change in changes {
            guard case .putTask(let task) = change else { continue }
            if let slot = slots[task.urlString] {
                tasks[slot] = task
            } else {
                slots[task.urlString] = tasks.count
                tasks.append(task)
            }
        }
        statistics.taskRowsWritten += tasks.count
        let urls = tasks.map(\.urlString)
        let lists = tasks.map(\.list)
        let states = tasks.map { PostgresRecordCoding.stateName($0.state) }
        let received = tasks.map(\.receivedLength)
        let records = tasks.map { PostgresRecordCoding.text(.putTask($0)) }
        return """
            INSERT INTO peregrine_tasks (store, url, added_order, list, state, received_length, record)
            SELECT \(identifier), u.url, nextval('peregrine_task_order'), u.list, u.state, u.received, u.record
            FROM unnest(\(urls)::text[], \(lists)::text[], \(states)::text[], \(received)::int8[], \(records)::text[])
                WITH ORDINALITY AS u(url, list, state, received, record, n)
            ORDER BY u.n
            ON CONFLICT (store, url) DO UPDATE SET list = EXCLUDED.list, state = EXCLUDED.state,
                received_length = EXCLUDED.received_length, record = EXCLUDED.record
            """
    }

    private func entryStatements(_ change: ListOrder.Change, list: String) -> [PostgresQuery] {
        var statements: [PostgresQuery] = []
        if change.rewritesAll {
            statements.append("DELETE FROM peregrine_list_entries WHERE store = \(identifier) AND list = \(list)")
        } else if let deleted = change.deleted {
            statements.append(
                """
                DELETE FROM peregrine_list_entries WHERE store = \(identifier) AND list = \(list)
                AND position BETWEEN \(deleted.lowerBound) AND \(deleted.upperBound)
                """)
        }
        if !change.inserted.isEmpty {
            let positions = change.inserted.map(\.position)
            let sections = change.inserted.map(\.section)
            let urls = change.inserted.map(\.url)
            statements.append(
                """
                INSERT INTO peregrine_list_entries (store, list, position, section, url)
                SELECT \(identifier), \(list), u.position, u.section, u.url
                FROM unnest(\(positions)::int8[], \(sections)::int4[], \(urls)::text[]) AS u(position, section, url)
                """)
        }
        return statements
    }

    /// A list as stored, for a change to a list this store has not read yet; nil when absent.
    private func readList(_ list: String, session: PostgresSession) throws(StoreError) -> CachedList? {
        let what = "cannot read the list \(list) of \(identifier) from"
        let results = try session.transaction(
            [
                "SELECT settings FROM peregrine_lists WHERE store = \(identifier) AND list = \(list)",
                """
                SELECT position, section, url FROM peregrine_list_entries
                WHERE store = \(identifier) AND list = \(list) ORDER BY position
                """,
            ], isolation: "ISOLATION LEVEL REPEATABLE READ READ ONLY", doing: what)
        do {
            guard let row = results[0].rows.first else { return nil }
            let settings = try row.decode(String.self)
            let entries = try results[1].rows.map { row in
                let (position, section, url) = try row.decode((Int64, Int32, String).self)
                return ListOrder.Entry(position: position, section: section, url: url)
            }
            return CachedList(settings: settings, order: ListOrder(entries: entries))
        } catch {
            throw corrupt("a row of list \(list) cannot be read: \(error)")
        }
    }

    private func decodeRecord(_ text: String) throws(StoreError) -> StoreChange {
        do {
            return try PostgresRecordCoding.change(text)
        } catch {
            throw corrupt("a record cannot be read: \(error.message)")
        }
    }

    private func corrupt(_ message: String) -> StoreError {
        StoreError(.corrupt, path: location.description, "the store \(identifier): \(message)")
    }
}

/// What a ``PostgresTaskStore`` wrote: for tests and benchmarks that check what a change costs.
public struct PostgresStoreStatistics: Sendable, Hashable {
    /// Transactions committed by `record`.
    public var transactions = 0
    /// Task rows inserted or updated.
    public var taskRowsWritten = 0
    /// Task rows deleted.
    public var taskRowsDeleted = 0
    /// List-entry rows inserted or deleted (what list changes cost).
    public var listRowsWritten = 0
    /// List settings rows written.
    public var listSettingsWritten = 0
    /// Times the store connected again after losing its connection.
    public var reconnections = 0

    /// No writes yet.
    public init() {}
}
