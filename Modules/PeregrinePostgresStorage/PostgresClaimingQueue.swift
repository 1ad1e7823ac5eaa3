import Logging
import PeregrineCore
import PeregrineStorage
import PostgresNIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A `ClaimingTaskQueue` in PostgreSQL: several services (processes, hosts) share one queue of
/// tasks, each claiming batches under leases it renews (issue 20).
///
/// The tasks are rows of `peregrine_tasks` whose `store` is the queue's name, with the lease in
/// columns (schema version 3): `lease_owner`, `lease_expires`, `claims` and
/// `lease_connections`. Leases are timed by the database server's clock (`now()`), so hosts with
/// skewed clocks agree on when a lease expired. Do not open a ``PostgresTaskStore`` with the
/// queue's name as its identifier for writing: the queue's rows are the queue's.
///
/// - A claim is one statement: `SELECT … ORDER BY added_order LIMIT n FOR UPDATE SKIP LOCKED`
///   over the waiting and expired tasks, updated to this owner in the same statement. Claimers
///   never wait for each other, unless the queue has ``Limits``: then claims take turns.
/// - Renewal, finishing and release are one statement each for a whole batch, and each only
///   touches rows whose `lease_owner` is this owner: a task another owner took over is never
///   finished here, whatever this owner believes.
/// - ``enqueue(_:)``, ``release(_:)`` and ``setLimits(_:)`` send `NOTIFY peregrine_queue` with
///   the queue's name in the same transaction, and so does ``finish(_:)`` when the queue has
///   limits; ``waitForWork(timeout:)`` listens on a second connection, so an idle service wakes
///   when work arrives instead of polling. ``finish(_:)`` numbers the tasks it ends (a
///   sequence) and sends `NOTIFY peregrine_queue_changes`: ``waitForEndings(timeout:)`` and
///   ``endings(after:limit:)`` let every service follow what the others finished.
///
/// **Durability.** ``enqueue(_:)`` and ``finish(_:)`` return once their commit is flushed;
/// claims, renewals and releases do not wait for the flush (a server crash may forget the last
/// of them: a task then comes back claimable, and its owner's finishing is refused).
///
/// **Threads.** As ``PostgresTaskStore``: the calls block the calling thread (never an event loop
/// of the queue's own group) and are serialised by a lock. ``waitForWork(timeout:)`` only
/// suspends.
///
/// **Failures.** A lost connection throws `StoreError.Code.unavailable` and the next call
/// connects again; a statement that failed wrote nothing.
public final class PostgresClaimingQueue: ClaimingTaskQueue {
    public let queue: String
    public let owner: String
    public let leaseDuration: Duration
    /// Where the queue lives (its description redacts the password).
    public let location: PostgresStoreLocation
    /// The connections this service may open for one task it claims: what a claim counts
    /// against the fleet's ``Limits/maxConnectionsPerOrigin``.
    public let connectionsPerTask: Int

    /// The channel of `NOTIFY` for new work, whose payload is a queue's name.
    static let channel = "peregrine_queue"
    /// The channel of `NOTIFY` for ended tasks, whose payload is a queue's name.
    static let changesChannel = "peregrine_queue_changes"
    /// Additions of at least this many tasks refresh the table's planner statistics.
    static let bulkAddition = 1000
    /// The first key of the transaction lock that limited claims of one queue take in turn
    /// (`pg_advisory_xact_lock(int, int)`, the second key `hashtext(queue)`); "PGCL" in ASCII.
    static let claimLockClass: Int32 = 0x5047_434C
    /// How many waiting tasks a limited claim looks at, at least: enough to pass over a run of
    /// tasks of a list or origin at its limit.
    static let limitedScan = 500

    private let group: MultiThreadedEventLoopGroup
    private let logger: Logger
    private let state: Locked<State>
    /// New work (`NOTIFY peregrine_queue`).
    private let work = WakeSignal()
    /// Tasks ended (`NOTIFY peregrine_queue_changes`).
    private let ended = WakeSignal()

    /// Read without waiting for ``state``, whose lock a call holds for its round trip.
    private let health = Locked(QueueReachability())

    private struct State {
        var session: PostgresSession?
        var listener: PostgresSession?
        var isClosed = false
        var reconnections = 0
    }

    /// Opens the queue `queue` in the database at `location` as `owner`: connects, brings the
    /// schema to this version, and starts listening for work.
    ///
    /// - Parameters:
    ///   - queue: the queue's name, the same for every service of the fleet.
    ///   - location: the database (a `postgresql://` string or a socket directory).
    ///   - owner: unique per running service; by default the host name, the process id and a
    ///     random number, so a restarted service never mistakes its old leases for its own.
    ///   - leaseDuration: how long a claim holds a task without renewal (at least 1 ms). Renew
    ///     well within it (a third of it is a good period).
    ///   - connectionsPerTask: the most connections this service opens for one task (its
    ///     transfers' split); a claim counts them against the per-origin limit (at least 1).
    ///   - logger: where connection losses and reconnections are logged.
    /// - Throws: `StoreError`: `.invalidIdentifier` for an empty queue or owner name;
    ///   `.unavailable` (the connection string redacted) when the server cannot be reached;
    ///   `.unsupportedVersion` when the schema is newer than this code.
    public init(
        queue: String, location: PostgresStoreLocation, owner: String? = nil, leaseDuration: Duration = .seconds(30),
        connectionsPerTask: Int = 1, logger: Logger? = nil
    ) throws(StoreError) {
        let owner = owner ?? Self.defaultOwner()
        guard !queue.isEmpty, !owner.isEmpty else {
            throw StoreError(.invalidIdentifier, path: location.description, "a queue and its owner need names")
        }
        guard leaseDuration >= .milliseconds(1) else {
            throw StoreError(.invalidConfiguration, path: location.description, "a lease lasts at least 1 ms")
        }
        guard connectionsPerTask >= 1 else {
            throw StoreError(.invalidConfiguration, path: location.description, "a task takes at least 1 connection")
        }
        self.connectionsPerTask = connectionsPerTask
        self.queue = queue
        self.owner = owner
        self.leaseDuration = leaseDuration
        self.location = location
        var logger = logger ?? Logger(label: "peregrine.postgres-queue")
        logger[metadataKey: "queue"] = "\(queue)"
        logger[metadataKey: "owner"] = "\(owner)"
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        state = Locked(State())
        do throws(StoreError) {
            // Migrations may wait for another service's: the connect timeout, not a call's deadline.
            let session = try PostgresSession.connect(to: location, on: group.next(), logger: logger)
            do throws(StoreError) {
                try PostgresTaskStore.migrate(session, location: location, logger: logger)
                try Self.prepare(session)
            } catch {
                session.close()
                throw error
            }
            session.deadline = callDeadline
            state.withLock { $0.session = session }
            try startListening()
        } catch {
            close()
            throw error
        }
    }

    /// Opens the queue at a connection string (see ``PostgresStoreLocation``).
    public convenience init(
        queue: String, connectionString: String, owner: String? = nil, leaseDuration: Duration = .seconds(30),
        connectionsPerTask: Int = 1, logger: Logger? = nil
    ) throws(StoreError) {
        try self.init(
            queue: queue, location: PostgresStoreLocation(parsing: connectionString), owner: owner,
            leaseDuration: leaseDuration, connectionsPerTask: connectionsPerTask, logger: logger)
    }

    deinit {
        // Never wait here: the last reference may go on an event loop of the group.
        let sessions = state.withLock { [$0.session, $0.listener].compactMap { $0 } }
        for session in sessions {
            let closed: EventLoopFuture<Void> = session.connection.close()
            closed.whenComplete { _ in }
        }
        work.endAll()
        ended.endAll()
        group.shutdownGracefully { _ in }
    }

    /// Times this queue connected again after losing its connection.
    public var reconnections: Int { state.withLock { $0.reconnections } }

    /// An owner name unique to this process and call: host, process id, random suffix.
    public static func defaultOwner() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "host"
        return "\(host):\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
    }

    private var leaseSeconds: Double {
        let components = leaseDuration.components
        return Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    // MARK: ClaimingTaskQueue

    public func enqueue(_ tasks: [StoredTask]) throws(StoreError) -> [String] {
        guard !tasks.isEmpty else { return [] }
        var seen = Set<String>()
        let unique = tasks.filter { seen.insert($0.urlString).inserted }
        let urls = unique.map(\.urlString)
        let lists = unique.map(\.list)
        let received = unique.map(\.receivedLength)
        let hashes = unique.map { Int64(bitPattern: QueueKeyHash.of($0.urlString)) }
        // Pending, or paused (aria2's `pause` at addition): claimed by nobody until resumed.
        let states = unique.map { $0.state == .paused ? "paused" : "pending" }
        let records = unique.map { task -> String in
            var task = task
            if task.state != .paused { task.state = .pending }
            return PostgresRecordCoding.text(.putTask(task))
        }
        let what = "cannot add \(tasks.count) tasks to the queue \(queue) in"
        return try withSession(doing: what) { session throws(StoreError) in
            let results = try session.transaction(
                [
                    "SET LOCAL synchronous_commit = on",
                    """
                    INSERT INTO peregrine_tasks
                        (store, url, added_order, list, state, received_length, record, url_hash)
                    SELECT \(queue), u.url, nextval('peregrine_task_order'), u.list, u.state, u.received, u.record,
                        u.hash
                    FROM unnest(
                        \(urls)::text[], \(lists)::text[], \(received)::int8[], \(records)::text[], \(hashes)::int8[],
                        \(states)::text[]
                    ) WITH ORDINALITY AS u(url, list, received, record, hash, state, n)
                    ORDER BY u.n
                    ON CONFLICT (store, url) DO NOTHING
                    RETURNING url
                    """,
                    "SELECT pg_notify(\(Self.channel), \(queue))",
                ], doing: what)
            let added = try decodeURLs(results[1])
            if added.count >= Self.bulkAddition {
                // Fresh statistics after a bulk addition: without them the planner sorts every
                // waiting task for each claim instead of reading the claimable index in order
                // (27 ms instead of 2 ms a claim with 10,000 waiting, measured for P10).
                _ = try? session.query("ANALYZE peregrine_tasks", doing: what)
            }
            return added
        }
    }

    public func claim(limit: Int) throws(StoreError) -> [TaskLease] {
        guard limit > 0 else { return [] }
        let what = "cannot claim tasks of the queue \(queue) in"
        let weight = connectionsPerTask
        // With limits, the claim looks past tasks it may not take (their list or origin is at
        // its limit) for ones it may: up to `scan` waiting tasks are locked for the statement.
        let scan = max(limit, Self.limitedScan)
        return try withSession(doing: what) { session throws(StoreError) in
            let results = try session.transaction(
                [
                    // Limited claims of one queue take turns, so that two services never both
                    // count the same free place; a queue without limits takes no lock.
                    """
                    SELECT pg_advisory_xact_lock(\(Self.claimLockClass), hashtext(store)) FROM peregrine_queues
                    WHERE store = \(queue) AND (max_downloads IS NOT NULL OR max_connections_per_origin IS NOT NULL)
                    """,
                    """
                    WITH limits AS (
                        SELECT (SELECT max_downloads FROM peregrine_queues WHERE store = \(queue)) AS downloads,
                            (SELECT max_connections_per_origin FROM peregrine_queues WHERE store = \(queue))
                                AS per_origin
                    ),
                    held AS (
                        SELECT list, origin, lease_connections FROM peregrine_tasks
                        WHERE store = \(queue) AND state = 'downloading' AND lease_expires >= now()
                    ),
                    held_by_list AS (SELECT list, count(*) AS n FROM held GROUP BY list),
                    held_by_origin AS (SELECT origin, sum(lease_connections) AS n FROM held GROUP BY origin),
                    claimable AS (
                        SELECT t.url, t.lease_owner, t.list, t.origin, t.added_order FROM peregrine_tasks t
                        WHERE t.store = \(queue) AND t.state IN ('pending', 'downloading')
                            AND (t.lease_expires IS NULL OR t.lease_expires < now())
                            AND t.list NOT IN (
                                SELECT h.list FROM held_by_list h, limits l WHERE h.n >= l.downloads)
                            AND t.origin NOT IN (
                                SELECT h.origin FROM held_by_origin h, limits l
                                WHERE h.n + \(weight) > l.per_origin)
                        ORDER BY t.added_order
                        LIMIT (
                            SELECT CASE WHEN downloads IS NULL AND per_origin IS NULL THEN \(limit) ELSE \(scan) END
                            FROM limits)
                        FOR UPDATE OF t SKIP LOCKED
                    ),
                    ranked AS (
                        SELECT c.url, c.lease_owner, c.list, c.origin, c.added_order,
                            row_number() OVER (PARTITION BY c.list ORDER BY c.added_order) AS in_list,
                            row_number() OVER (PARTITION BY c.origin ORDER BY c.added_order) AS in_origin
                        FROM claimable c
                    ),
                    chosen AS (
                        SELECT r.url, r.lease_owner FROM ranked r
                        CROSS JOIN limits l
                        LEFT JOIN held_by_list hl ON hl.list = r.list
                        LEFT JOIN held_by_origin ho ON ho.origin = r.origin
                        WHERE (l.downloads IS NULL OR coalesce(hl.n, 0) + r.in_list <= l.downloads)
                            AND (l.per_origin IS NULL OR coalesce(ho.n, 0) + r.in_origin * \(weight) <= l.per_origin)
                        ORDER BY r.added_order
                        LIMIT \(limit)
                    )
                    UPDATE peregrine_tasks t
                    SET lease_owner = \(owner), lease_expires = now() + make_interval(secs => \(leaseSeconds)),
                        state = 'downloading', claims = t.claims + 1, lease_connections = \(weight)
                    FROM chosen c
                    WHERE t.store = \(queue) AND t.url = c.url
                    RETURNING t.record, t.received_length, t.claims, c.lease_owner, t.added_order
                    """,
                ], doing: what)
            var leases: [(order: Int64, lease: TaskLease)] = []
            do {
                for row in results[1].rows {
                    let (text, received, claims, previous, order) = try row.decode(
                        (String, Int64, Int32, String?, Int64).self)
                    guard case .putTask(var task) = try decodeRecord(text) else {
                        throw corrupt("a task row holds another record")
                    }
                    task.state = .downloading
                    task.receivedLength = received
                    leases.append((order, TaskLease(task: task, attempt: Int(claims), previousOwner: previous)))
                }
            } catch let error as StoreError {
                throw error
            } catch {
                throw corrupt("a claimed row cannot be read: \(error)")
            }
            // The statement returns rows in no set order; hand them out oldest first.
            return leases.sorted { $0.order < $1.order }.map(\.lease)
        }
    }

    public func renew(_ progress: [StoredTask]) throws(StoreError) -> Set<String> {
        guard !progress.isEmpty else { return [] }
        let what = "cannot renew \(progress.count) leases of the queue \(queue) in"
        let (urls, _, received, records) = columns(progress, state: .downloading)
        return try withSession(doing: what) { session throws(StoreError) in
            let result = try session.query(
                """
                UPDATE peregrine_tasks t
                SET lease_expires = now() + make_interval(secs => \(leaseSeconds)),
                    received_length = u.received, record = u.record
                FROM unnest(\(urls)::text[], \(received)::int8[], \(records)::text[]) AS u(url, received, record)
                WHERE t.store = \(queue) AND t.url = u.url AND t.lease_owner = \(owner) AND t.state = 'downloading'
                RETURNING t.url
                """, doing: what)
            return Set(try decodeURLs(result))
        }
    }

    public func finish(_ outcomes: [StoredTask]) throws(StoreError) -> Set<String> {
        guard !outcomes.isEmpty else { return [] }
        let what = "cannot finish \(outcomes.count) tasks of the queue \(queue) in"
        let (urls, states, received, records) = columns(outcomes, state: nil)
        return try withSession(doing: what) { session throws(StoreError) in
            let results = try session.transaction(
                [
                    "SET LOCAL synchronous_commit = on",
                    """
                    UPDATE peregrine_tasks t
                    SET state = u.state, received_length = u.received, record = u.record,
                        lease_owner = NULL, lease_expires = NULL, ended_order = nextval('peregrine_ended_order')
                    FROM unnest(\(urls)::text[], \(states)::text[], \(received)::int8[], \(records)::text[])
                        AS u(url, state, received, record)
                    WHERE t.store = \(queue) AND t.url = u.url AND t.lease_owner = \(owner) AND t.state = 'downloading'
                    RETURNING t.url
                    """,
                    "SELECT pg_notify(\(Self.changesChannel), \(queue))",
                    // Under limits, an ended task frees a place that an idle service may take.
                    """
                    SELECT pg_notify(\(Self.channel), store) FROM peregrine_queues
                    WHERE store = \(queue) AND (max_downloads IS NOT NULL OR max_connections_per_origin IS NOT NULL)
                    """,
                ], doing: what)
            return Set(try decodeURLs(results[1]))
        }
    }

    public func release(_ tasks: [StoredTask]) throws(StoreError) -> Set<String> {
        guard !tasks.isEmpty else { return [] }
        let what = "cannot release \(tasks.count) tasks of the queue \(queue) in"
        let (urls, _, received, records) = columns(tasks, state: .pending)
        return try withSession(doing: what) { session throws(StoreError) in
            let results = try session.transaction(
                [
                    """
                    UPDATE peregrine_tasks t
                    SET state = 'pending', received_length = u.received, record = u.record,
                        lease_owner = NULL, lease_expires = NULL
                    FROM unnest(\(urls)::text[], \(received)::int8[], \(records)::text[]) AS u(url, received, record)
                    WHERE t.store = \(queue) AND t.url = u.url AND t.lease_owner = \(owner) AND t.state = 'downloading'
                    RETURNING t.url
                    """,
                    "SELECT pg_notify(\(Self.channel), \(queue))",
                ], doing: what)
            return Set(try decodeURLs(results[0]))
        }
    }

    public func entries(_ urls: [String]) throws(StoreError) -> [String: QueuedTask] {
        guard !urls.isEmpty else { return [:] }
        let what = "cannot read \(urls.count) tasks of the queue \(queue) in"
        return try readEntries(
            """
            SELECT record, received_length, claims, state, CASE WHEN lease_expires >= now() THEN lease_owner END
            FROM peregrine_tasks
            WHERE store = \(queue) AND url = ANY(\(urls)::text[])
            """, doing: what)
    }

    public func entries(keyHashes: [UInt64]) throws(StoreError) -> [String: QueuedTask] {
        guard !keyHashes.isEmpty else { return [:] }
        let what = "cannot look up \(keyHashes.count) tasks of the queue \(queue) in"
        let hashes = keyHashes.map { Int64(bitPattern: $0) }
        return try readEntries(
            """
            SELECT record, received_length, claims, state, CASE WHEN lease_expires >= now() THEN lease_owner END
            FROM peregrine_tasks
            WHERE store = \(queue) AND url_hash = ANY(\(hashes)::int8[])
            """, doing: what)
    }

    /// Rows of `record, received_length, claims, state, holder` as entries by URL.
    private func readEntries(_ query: PostgresQuery, doing what: String) throws(StoreError) -> [String: QueuedTask] {
        let rows = try readRows(query, doing: what)
        return Dictionary(rows.map { ($0.entry.task.urlString, $0.entry) }, uniquingKeysWith: { first, _ in first })
    }

    /// Rows of `record, received_length, claims, state, holder` as entries, in the rows'
    /// order; with `ordered`, each with the row's sixth column (a bigint; else 0).
    private func readRows(_ query: PostgresQuery, ordered: Bool = false, doing what: String) throws(StoreError) -> [(
        entry: QueuedTask, order: Int64
    )] {
        try withSession(doing: what) { session throws(StoreError) in
            let result = try session.query(query, doing: what)
            var entries: [(entry: QueuedTask, order: Int64)] = []
            do {
                for row in result.rows {
                    let (text, received, claims, stateName, holder) = try row.decode(
                        (String, Int64, Int32, String, String?).self)
                    var order: Int64 = 0
                    if ordered { order = try row.decode((String, Int64, Int32, String, String?, Int64).self).5 }
                    guard case .putTask(var task) = try decodeRecord(text) else {
                        throw corrupt("a task row holds another record")
                    }
                    task.receivedLength = received
                    // A claimed task whose lease ran out waits for the next claim.
                    if stateName == "downloading" { task.state = holder == nil ? .pending : .downloading }
                    if stateName == "pending" { task.state = .pending }
                    if stateName == "paused" { task.state = .paused }
                    entries.append((QueuedTask(task: task, holder: holder, claims: Int(claims)), order))
                }
            } catch let error as StoreError {
                throw error
            } catch {
                throw corrupt("a row cannot be read: \(error)")
            }
            return entries
        }
    }

    // MARK: The queue as every owner sees it

    public func page(_ phase: QueuePhase, offset: Int, count: Int) throws(StoreError) -> [QueuedTask] {
        guard count > 0 else { return [] }
        // aria2's paging: from the front in order, or from the end (-1 the last) backwards.
        let backwards = offset < 0
        let skip = Int64(backwards ? -(offset + 1) : offset)
        let direction = backwards ? "DESC" : "ASC"
        let (condition, order) =
            switch phase {
            case .waiting:
                (
                    """
                    (state IN ('pending', 'downloading') AND (lease_expires IS NULL OR lease_expires < now())
                        OR state = 'paused')
                    """,
                    "added_order \(direction)"
                )
            case .held: ("state = 'downloading' AND lease_expires >= now()", "added_order \(direction)")
            case .all: ("true", "added_order \(direction)")
            case .ended:
                (
                    "state NOT IN ('pending', 'downloading', 'paused')",
                    "ended_order \(direction) NULLS \(backwards ? "LAST" : "FIRST"), added_order \(direction)"
                )
            }
        let what = "cannot read a page of the queue \(queue) in"
        return try readRows(
            """
            SELECT record, received_length, claims, state, CASE WHEN lease_expires >= now() THEN lease_owner END
            FROM peregrine_tasks
            WHERE store = \(queue) AND \(unescaped: condition)
            ORDER BY \(unescaped: order)
            OFFSET \(skip) LIMIT \(Int64(count))
            """, doing: what
        ).map(\.entry)
    }

    public func census() throws(StoreError) -> QueueCensus {
        let what = "cannot count the tasks of the queue \(queue) in"
        return try withSession(doing: what) { session throws(StoreError) in
            let result = try session.query(
                """
                SELECT
                    count(*) FILTER (WHERE state IN ('pending', 'downloading')
                        AND (lease_expires IS NULL OR lease_expires < now()) OR state = 'paused'),
                    count(*) FILTER (WHERE state = 'downloading' AND lease_expires >= now()),
                    count(*) FILTER (WHERE state NOT IN ('pending', 'downloading', 'paused')),
                    coalesce(max(added_order), 0)
                FROM peregrine_tasks WHERE store = \(queue)
                """, doing: what)
            do {
                for row in result.rows {
                    let (waiting, held, ended, newest) = try row.decode((Int64, Int64, Int64, Int64).self)
                    return QueueCensus(
                        waiting: Int(waiting), held: Int(held), ended: Int(ended), newestAddition: newest)
                }
            } catch {
                throw corrupt("the counts cannot be read: \(error)")
            }
            return QueueCensus(waiting: 0, held: 0, ended: 0)
        }
    }

    public func endings(after cursor: Int64?, limit: Int) throws(StoreError) -> (tasks: [QueuedTask], cursor: Int64) {
        let what = "cannot read the endings of the queue \(queue) in"
        guard let cursor else {
            let rows = try withSession(doing: what) { session throws(StoreError) in
                try session.query(
                    """
                    SELECT coalesce(max(ended_order), 0) FROM peregrine_tasks
                    WHERE store = \(queue) AND ended_order IS NOT NULL
                    """, doing: what)
            }
            do {
                for row in rows.rows { return ([], try row.decode(Int64.self)) }
            } catch {
                throw corrupt("the last ending cannot be read: \(error)")
            }
            return ([], 0)
        }
        guard limit > 0 else { return ([], cursor) }
        let rows = try readRows(
            """
            SELECT record, received_length, claims, state, NULL::text, ended_order
            FROM peregrine_tasks
            WHERE store = \(queue) AND ended_order > \(cursor)
            ORDER BY ended_order
            LIMIT \(Int64(limit))
            """, ordered: true, doing: what)
        return (rows.map(\.entry), rows.last?.order ?? cursor)
    }

    public func control(_ urls: [String], _ change: QueueControl) throws(StoreError) -> Set<String> {
        guard !urls.isEmpty else { return [] }
        return try control(urls, change, doing: "cannot change \(urls.count) tasks of the queue \(queue) in")
    }

    public func controlAll(_ change: QueueControl) throws(StoreError) -> Set<String> {
        try control(nil, change, doing: "cannot change the tasks of the queue \(queue) in")
    }

    /// ``control(_:_:)`` of the tasks among `urls`, or of every task when `urls` is nil.
    private func control(_ urls: [String]?, _ change: QueueControl, doing what: String) throws(StoreError)
        -> Set<String>
    {
        // Every task when `all` (an empty array then: it matches nothing).
        let all = urls == nil
        let some = urls ?? []
        let statement: PostgresQuery =
            switch change {
            case .pause:
                """
                UPDATE peregrine_tasks SET state = 'paused', lease_owner = NULL, lease_expires = NULL
                WHERE store = \(queue) AND (\(all) OR url = ANY(\(some)::text[])) AND state IN ('pending', 'downloading')
                RETURNING url
                """
            case .resume:
                """
                UPDATE peregrine_tasks SET state = 'pending'
                WHERE store = \(queue) AND (\(all) OR url = ANY(\(some)::text[])) AND state = 'paused'
                RETURNING url
                """
            case .retry:
                """
                UPDATE peregrine_tasks SET state = 'pending', ended_order = NULL
                WHERE store = \(queue) AND (\(all) OR url = ANY(\(some)::text[])) AND state IN ('failed', 'stopped')
                RETURNING url
                """
            case .remove:
                """
                DELETE FROM peregrine_tasks
                WHERE store = \(queue) AND (\(all) OR url = ANY(\(some)::text[])) AND state IN ('pending', 'downloading', 'paused')
                RETURNING url
                """
            case .forget:
                """
                DELETE FROM peregrine_tasks
                WHERE store = \(queue) AND (\(all) OR url = ANY(\(some)::text[])) AND state IN ('finished', 'failed', 'stopped')
                RETURNING url
                """
            }
        var statements: [PostgresQuery] = ["SET LOCAL synchronous_commit = on", statement]
        // A resumed or retried task is work for idle services.
        if change == .resume || change == .retry {
            statements.append("SELECT pg_notify(\(Self.channel), \(queue))")
        }
        return try withSession(doing: what) { session throws(StoreError) in
            let results = try session.transaction(statements, doing: what)
            return Set(try decodeURLs(results[1]))
        }
    }

    // MARK: Limits

    /// Limits that hold across every service of a queue: kept in the database
    /// (`peregrine_queues`), so each service's claims count what all of them hold.
    ///
    /// A claim takes a task only when, counting the tasks whose leases are running, its list
    /// stays within ``maxDownloads`` and its origin (scheme, host and port) within
    /// ``maxConnectionsPerOrigin``, where each held task counts the ``connectionsPerTask`` of
    /// the service that claimed it. Limited claims of one queue take turns (a transaction lock),
    /// so two services never both take the last free place. A service cut off from the database
    /// may go on downloading until its lease runs out while its tasks are counted free again
    /// (see the fleet guide); a task whose service's `connectionsPerTask` exceeds the per-origin
    /// limit is never claimed by that service.
    public struct Limits: Sendable, Hashable, CustomStringConvertible {
        /// Tasks of one list held at once across the fleet; nil: no limit.
        public var maxDownloads: Int?
        /// Connections to one origin at once across the fleet; nil: no limit.
        public var maxConnectionsPerOrigin: Int?

        /// Limits; nil means none.
        public init(maxDownloads: Int? = nil, maxConnectionsPerOrigin: Int? = nil) {
            self.maxDownloads = maxDownloads
            self.maxConnectionsPerOrigin = maxConnectionsPerOrigin
        }

        public var description: String {
            let downloads = maxDownloads.map { "\($0) downloads per list" } ?? "no download limit"
            let origins = maxConnectionsPerOrigin.map { "\($0) connections per origin" } ?? "no origin limit"
            return "\(downloads), \(origins)"
        }
    }

    /// The queue's limits as the database has them now.
    public func limits() throws(StoreError) -> Limits {
        let what = "cannot read the limits of the queue \(queue) in"
        return try withSession(doing: what) { session throws(StoreError) in
            let result = try session.query(
                "SELECT max_downloads, max_connections_per_origin FROM peregrine_queues WHERE store = \(queue)",
                doing: what)
            var limits = Limits()
            do {
                for row in result.rows {
                    let (downloads, perOrigin) = try row.decode((Int32?, Int32?).self)
                    limits = Limits(
                        maxDownloads: downloads.map(Int.init), maxConnectionsPerOrigin: perOrigin.map(Int.init))
                }
            } catch {
                throw corrupt("the limits cannot be read: \(error)")
            }
            return limits
        }
    }

    /// Sets the queue's limits for every service of the fleet; their next claims count them.
    /// Tasks held beyond a lowered limit run on; no new one is claimed until the count is below it.
    ///
    /// - Throws: `StoreError.Code.invalidConfiguration` for a limit below 1 or above `Int32.max`.
    public func setLimits(_ limits: Limits) throws(StoreError) {
        for value in [limits.maxDownloads, limits.maxConnectionsPerOrigin].compactMap({ $0 })
        where value < 1 || value > Int(Int32.max) {
            throw StoreError(
                .invalidConfiguration, path: location.description, "a limit is 1 to \(Int32.max), not \(value)")
        }
        let downloads = limits.maxDownloads.map { Int32($0) }
        let perOrigin = limits.maxConnectionsPerOrigin.map { Int32($0) }
        let what = "cannot set the limits of the queue \(queue) in"
        try withSession(doing: what) { session throws(StoreError) in
            _ = try session.transaction(
                [
                    "SET LOCAL synchronous_commit = on",
                    """
                    INSERT INTO peregrine_queues (store, max_downloads, max_connections_per_origin)
                    VALUES (\(queue), \(downloads), \(perOrigin))
                    ON CONFLICT (store) DO UPDATE SET max_downloads = excluded.max_downloads,
                        max_connections_per_origin = excluded.max_connections_per_origin, changed_at = now()
                    """,
                    // Services idle for want of a free place claim again at once.
                    "SELECT pg_notify(\(Self.channel), \(queue))",
                ], doing: what)
        }
    }

    public func waitForWork(timeout: Duration) async -> Bool {
        await work.wait(timeout: timeout)
    }

    public func waitForEndings(timeout: Duration) async -> Bool {
        await ended.wait(timeout: timeout)
    }

    /// Closes both connections; later calls throw `closed`. Held leases are not released: they
    /// expire (call ``release(_:)`` first to hand tasks back at once).
    public func close() {
        let sessions = state.withLock { state -> [PostgresSession] in
            guard !state.isClosed else { return [] }
            state.isClosed = true
            defer { (state.session, state.listener) = (nil, nil) }
            return [state.session, state.listener].compactMap { $0 }
        }
        for session in sessions { session.close() }
        work.endAll()
        ended.endAll()
        try? group.syncShutdownGracefully()
    }

    // MARK: Listening

    /// Opens the listening connection when there is none (at open, and after it was lost: the
    /// next claim calls this). Work added while it was down is found by the next claim.
    private func startListening() throws(StoreError) {
        let listener = try state.withLock { state throws(StoreError) -> PostgresSession? in
            try checkOpen(state)
            return state.listener
        }
        if let listener, !listener.isClosed {
            // It only receives: a network that drops its packets would leave it silent for ever.
            listener.probe(every: callDeadline) { [logger, queue] in
                let what = "the connection listening for the queue \(queue)'s new work and endings"
                logger.warning("\(what) stopped answering; it is opened again at the next call")
            }
            return
        }
        if listener != nil { logger.notice("listening again for the queue \(queue)'s new work and endings") }
        let session = try PostgresSession.connect(
            to: location, on: group.next(), logger: logger, deadline: callDeadline)
        let queue = queue
        let (work, ended) = (work, ended)
        session.connection.addListener(channel: Self.channel) { _, notification in
            if notification.payload == queue { work.notify() }
        }
        session.connection.addListener(channel: Self.changesChannel) { _, notification in
            if notification.payload == queue { ended.notify() }
        }
        // Listening starts before the first claim that follows; a failure here only loses the
        // wake-up (claims still find the work, followers the endings), so it is logged, not thrown.
        do throws(StoreError) {
            for channel in [Self.channel, Self.changesChannel] {
                _ = try session.query(PostgresQuery(unsafeSQL: "LISTEN \(channel)"), doing: "cannot listen in")
            }
        } catch {
            logger.warning("cannot listen for new work: \(error.message)")
        }
        let stale = state.withLock { state in
            defer { state.listener = session }
            return state.listener
        }
        stale?.close()
    }

    // MARK: Connection

    /// How long a call may wait for the database before its connection is dropped as lost:
    /// a third of the lease, at most the connect timeout, so that a service cut off by a network
    /// that drops packets learns it before its leases can expire — and at least 5 s, so that a
    /// database that is only slow (a loaded machine) is not cut off call after call.
    var callDeadline: Duration {
        min(location.connectTimeout, max(.seconds(5), leaseDuration / 3))
    }

    public var reachability: QueueReachability { health.withLock { $0 } }

    /// Records a call's start, and its end: the first failure for want of an answer and the
    /// first answer after failures are logged, with how long the database was away.
    private func recordCall(started: Bool, failed: StoreError? = nil) {
        let now = ContinuousClock.now
        let change = health.withLock { health -> (since: ContinuousClock.Instant, failing: Bool)? in
            if started {
                health.callStartedAt = now
                return nil
            }
            health.callStartedAt = nil
            if let failed, failed.code == .unavailable {
                guard health.failingSince == nil else { return nil }
                health.failingSince = now
                return (now, true)
            }
            // Any other outcome is an answer (an error of the query's own included).
            guard let since = health.failingSince else { return nil }
            health.failingSince = nil
            return (since, false)
        }
        guard let change else { return }
        if change.failing {
            logger.warning("the database stopped answering: \(failed?.message ?? "")")
        } else {
            logger.notice("the database answers again, after \(Self.seconds(now - change.since)) s without")
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let tenths = duration.components.seconds * 10 + duration.components.attoseconds / 100_000_000_000_000_000
        return "\(tenths / 10).\(tenths % 10)"
    }

    private func withSession<Result: Sendable>(
        doing what: String, _ body: (PostgresSession) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        let result = try state.withLock { state throws(StoreError) -> Result in
            try checkOpen(state)
            recordCall(started: true)
            var failure: StoreError?
            defer { recordCall(started: false, failed: failure) }
            let session: PostgresSession
            if let current = state.session, !current.isClosed {
                session = current
            } else {
                state.session?.close()
                state.session = nil
                logger.notice("connecting again to \(location)")
                do throws(StoreError) {
                    session = try PostgresSession.connect(
                        to: location, on: group.next(), logger: logger, deadline: callDeadline)
                } catch {
                    failure = error
                    throw error
                }
                do throws(StoreError) {
                    try Self.prepare(session)
                } catch {
                    session.close()
                    failure = error
                    throw error
                }
                state.session = session
                state.reconnections += 1
            }
            do throws(StoreError) {
                return try body(session)
            } catch {
                failure = error
                if error.code == .unavailable || session.isClosed {
                    logger.warning("lost the connection to \(location): \(error.message)")
                    session.close()
                    state.session = nil
                }
                throw error
            }
        }
        // The listener may have gone with the server; wake-ups resume once it is back.
        do throws(StoreError) {
            try startListening()
        } catch {
            logger.debug("cannot listen for new work yet: \(error.message)")
        }
        return result
    }

    /// Claims, renewals and releases commit without waiting for the WAL flush: one lost in a
    /// server crash only leaves a task to be claimed again, which every lease allows for.
    /// Additions and endings ask for the flush (`SET LOCAL synchronous_commit = on`).
    private static func prepare(_ session: PostgresSession) throws(StoreError) {
        _ = try session.query("SET synchronous_commit = off", doing: "cannot set up the queue's connection to")
    }

    private func checkOpen(_ state: State) throws(StoreError) {
        guard !state.isClosed else {
            throw StoreError(.closed, path: location.description, "the queue \(queue) is closed")
        }
    }

    private func columns(_ tasks: [StoredTask], state: DownloadState?) -> (
        urls: [String], states: [String], received: [Int64], records: [String]
    ) {
        var columns: ([String], [String], [Int64], [String]) = ([], [], [], [])
        for var task in tasks {
            if let state { task.state = state }
            columns.0.append(task.urlString)
            columns.1.append(PostgresRecordCoding.stateName(task.state))
            columns.2.append(task.receivedLength)
            columns.3.append(PostgresRecordCoding.text(.putTask(task)))
        }
        return columns
    }

    private func decodeURLs(_ result: PostgresQueryResult) throws(StoreError) -> [String] {
        do {
            return try result.rows.map { try $0.decode(String.self) }
        } catch {
            throw corrupt("a URL cannot be read: \(error)")
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
        StoreError(.corrupt, path: location.description, "the queue \(queue): \(message)")
    }
}
