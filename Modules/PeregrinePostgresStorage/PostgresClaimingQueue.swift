import Logging
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
/// three columns (schema version 2): `lease_owner`, `lease_expires` and `claims`. Leases are
/// timed by the database server's clock (`now()`), so hosts with skewed clocks agree on when a
/// lease expired. Do not open a ``PostgresTaskStore`` with the queue's name as its identifier
/// for writing: the queue's rows are the queue's.
///
/// - A claim is one statement: `SELECT … ORDER BY added_order LIMIT n FOR UPDATE SKIP LOCKED`
///   over the waiting and expired tasks, updated to this owner in the same statement. Claimers
///   never wait for each other.
/// - Renewal, finishing and release are one statement each for a whole batch, and each only
///   touches rows whose `lease_owner` is this owner: a task another owner took over is never
///   finished here, whatever this owner believes.
/// - ``enqueue(_:)`` and ``finish(_:)`` send `NOTIFY peregrine_queue` with the queue's name in
///   the same transaction; ``waitForWork(timeout:)`` listens on a second connection, so an idle
///   service wakes when work arrives instead of polling.
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

    /// The channel of `NOTIFY`, whose payload is a queue's name.
    static let channel = "peregrine_queue"
    /// Additions of at least this many tasks refresh the table's planner statistics.
    static let bulkAddition = 1000

    private let group: MultiThreadedEventLoopGroup
    private let logger: Logger
    private let state: Mutex<State>
    private let wake = Mutex(WakeState())

    private struct State {
        var session: PostgresSession?
        var listener: PostgresSession?
        var isClosed = false
        var reconnections = 0
    }

    private struct WakeState {
        /// A notification came while nobody waited: the next wait returns at once.
        var notified = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        /// Waits whose time ran out before they were registered.
        var timedOut: Set<Int> = []
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
    ///   - logger: where connection losses and reconnections are logged.
    /// - Throws: `StoreError`: `.invalidIdentifier` for an empty queue or owner name;
    ///   `.unavailable` (the connection string redacted) when the server cannot be reached;
    ///   `.unsupportedVersion` when the schema is newer than this code.
    public init(
        queue: String, location: PostgresStoreLocation, owner: String? = nil, leaseDuration: Duration = .seconds(30),
        logger: Logger? = nil
    ) throws(StoreError) {
        let owner = owner ?? Self.defaultOwner()
        guard !queue.isEmpty, !owner.isEmpty else {
            throw StoreError(.invalidIdentifier, path: location.description, "a queue and its owner need names")
        }
        guard leaseDuration >= .milliseconds(1) else {
            throw StoreError(.invalidConfiguration, path: location.description, "a lease lasts at least 1 ms")
        }
        self.queue = queue
        self.owner = owner
        self.leaseDuration = leaseDuration
        self.location = location
        var logger = logger ?? Logger(label: "peregrine.postgres-queue")
        logger[metadataKey: "queue"] = "\(queue)"
        logger[metadataKey: "owner"] = "\(owner)"
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        state = Mutex(State())
        do throws(StoreError) {
            let session = try PostgresSession.connect(to: location, on: group.next(), logger: logger)
            do throws(StoreError) {
                try PostgresTaskStore.migrate(session, location: location, logger: logger)
                try Self.prepare(session)
            } catch {
                session.close()
                throw error
            }
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
        logger: Logger? = nil
    ) throws(StoreError) {
        try self.init(
            queue: queue, location: PostgresStoreLocation(parsing: connectionString), owner: owner,
            leaseDuration: leaseDuration, logger: logger)
    }

    deinit {
        // Never wait here: the last reference may go on an event loop of the group.
        let sessions = state.withLock { [$0.session, $0.listener].compactMap { $0 } }
        for session in sessions {
            let closed: EventLoopFuture<Void> = session.connection.close()
            closed.whenComplete { _ in }
        }
        let waiters = wake.withLock { Array($0.waiters.values) }
        for waiter in waiters { waiter.resume(returning: false) }
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
        let records = unique.map { task -> String in
            var task = task
            task.state = .pending
            return PostgresRecordCoding.text(.putTask(task))
        }
        let what = "cannot add \(tasks.count) tasks to the queue \(queue) in"
        return try withSession(doing: what) { session throws(StoreError) in
            let results = try session.transaction(
                [
                    "SET LOCAL synchronous_commit = on",
                    """
                    INSERT INTO peregrine_tasks (store, url, added_order, list, state, received_length, record)
                    SELECT \(queue), u.url, nextval('peregrine_task_order'), u.list, 'pending', u.received, u.record
                    FROM unnest(\(urls)::text[], \(lists)::text[], \(received)::int8[], \(records)::text[])
                        WITH ORDINALITY AS u(url, list, received, record, n)
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
        return try withSession(doing: what) { session throws(StoreError) in
            let result = try session.query(
                """
                WITH claimable AS (
                    SELECT url, lease_owner FROM peregrine_tasks
                    WHERE store = \(queue) AND state IN ('pending', 'downloading')
                        AND (lease_expires IS NULL OR lease_expires < now())
                    ORDER BY added_order
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                )
                UPDATE peregrine_tasks t
                SET lease_owner = \(owner), lease_expires = now() + make_interval(secs => \(leaseSeconds)),
                    state = 'downloading', claims = t.claims + 1
                FROM claimable c
                WHERE t.store = \(queue) AND t.url = c.url
                RETURNING t.record, t.received_length, t.claims, c.lease_owner
                """, doing: what)
            var leases: [TaskLease] = []
            do {
                for row in result.rows {
                    let (text, received, claims, previous) = try row.decode((String, Int64, Int32, String?).self)
                    guard case .putTask(var task) = try decodeRecord(text) else {
                        throw corrupt("a task row holds another record")
                    }
                    task.state = .downloading
                    task.receivedLength = received
                    leases.append(TaskLease(task: task, attempt: Int(claims), previousOwner: previous))
                }
            } catch let error as StoreError {
                throw error
            } catch {
                throw corrupt("a claimed row cannot be read: \(error)")
            }
            // The statement returns rows in no set order; hand them out oldest first.
            return leases
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
                        lease_owner = NULL, lease_expires = NULL
                    FROM unnest(\(urls)::text[], \(states)::text[], \(received)::int8[], \(records)::text[])
                        AS u(url, state, received, record)
                    WHERE t.store = \(queue) AND t.url = u.url AND t.lease_owner = \(owner) AND t.state = 'downloading'
                    RETURNING t.url
                    """,
                    "SELECT pg_notify(\(Self.channel + "_changes"), \(queue))",
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
        return try withSession(doing: what) { session throws(StoreError) in
            let result = try session.query(
                """
                SELECT record, received_length, claims, state,
                    CASE WHEN lease_expires >= now() THEN lease_owner END
                FROM peregrine_tasks
                WHERE store = \(queue) AND url = ANY(\(urls)::text[])
                """, doing: what)
            var entries: [String: QueuedTask] = [:]
            do {
                for row in result.rows {
                    let (text, received, claims, stateName, holder) = try row.decode(
                        (String, Int64, Int32, String, String?).self)
                    guard case .putTask(var task) = try decodeRecord(text) else {
                        throw corrupt("a task row holds another record")
                    }
                    task.receivedLength = received
                    // A claimed task whose lease ran out waits for the next claim.
                    if stateName == "downloading" { task.state = holder == nil ? .pending : .downloading }
                    if stateName == "pending" { task.state = .pending }
                    entries[task.urlString] = QueuedTask(task: task, holder: holder, claims: Int(claims))
                }
            } catch let error as StoreError {
                throw error
            } catch {
                throw corrupt("a row cannot be read: \(error)")
            }
            return entries
        }
    }

    public func waitForWork(timeout: Duration) async -> Bool {
        let id: Int? = wake.withLock { wake in
            if wake.notified {
                wake.notified = false
                return nil
            }
            wake.nextWaiter += 1
            return wake.nextWaiter
        }
        guard let id else { return true }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self.resumeWaiter(id, with: false)
        }
        defer {
            timer.cancel()
            wake.withLock { _ = $0.timedOut.remove(id) }
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let early = wake.withLock { wake -> Bool? in
                    if wake.timedOut.remove(id) != nil { return false }
                    if wake.notified {
                        wake.notified = false
                        return true
                    }
                    wake.waiters[id] = continuation
                    return nil
                }
                if let early { continuation.resume(returning: early) }
            }
        } onCancel: {
            self.resumeWaiter(id, with: false)
        }
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
        let waiters = wake.withLock { wake in
            defer { wake.waiters = [:] }
            return Array(wake.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: false) }
        try? group.syncShutdownGracefully()
    }

    // MARK: Listening

    private func resumeWaiter(_ id: Int, with value: Bool) {
        let waiter = wake.withLock { wake -> CheckedContinuation<Bool, Never>? in
            guard let waiter = wake.waiters.removeValue(forKey: id) else {
                wake.timedOut.insert(id)
                return nil
            }
            return waiter
        }
        waiter?.resume(returning: value)
    }

    private func notified() {
        let waiters = wake.withLock { wake -> [CheckedContinuation<Bool, Never>] in
            let waiters = Array(wake.waiters.values)
            wake.waiters = [:]
            if waiters.isEmpty { wake.notified = true }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Opens the listening connection when there is none (at open, and after it was lost: the
    /// next claim calls this). Work added while it was down is found by the next claim.
    private func startListening() throws(StoreError) {
        let needed = try state.withLock { state throws(StoreError) -> Bool in
            try checkOpen(state)
            return state.listener.map(\.isClosed) ?? true
        }
        guard needed else { return }
        let session = try PostgresSession.connect(to: location, on: group.next(), logger: logger)
        let queue = queue
        session.connection.addListener(channel: Self.channel) { [weak self] _, notification in
            if notification.payload == queue { self?.notified() }
        }
        // Listening starts before the first claim that follows; a failure here only loses the
        // wake-up (claims still find the work), so it is logged, not thrown.
        do throws(StoreError) {
            _ = try session.query(PostgresQuery(unsafeSQL: "LISTEN \(Self.channel)"), doing: "cannot listen in")
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

    private func withSession<Result: Sendable>(
        doing what: String, _ body: (PostgresSession) throws(StoreError) -> Result
    ) throws(StoreError) -> Result {
        let result = try state.withLock { state throws(StoreError) -> Result in
            try checkOpen(state)
            let session: PostgresSession
            if let current = state.session, !current.isClosed {
                session = current
            } else {
                state.session?.close()
                state.session = nil
                logger.notice("connecting again to \(location)")
                session = try PostgresSession.connect(to: location, on: group.next(), logger: logger)
                do throws(StoreError) {
                    try Self.prepare(session)
                } catch {
                    session.close()
                    throw error
                }
                state.session = session
                state.reconnections += 1
            }
            do throws(StoreError) {
                return try body(session)
            } catch {
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
