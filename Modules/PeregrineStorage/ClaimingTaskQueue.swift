/// A queue of tasks shared by several services (processes, hosts): each service claims tasks
/// under a lease, works on them, and finishes them; a service that stops renewing loses its
/// leases and another claims its tasks (issue 20).
///
/// Implementation requirements:
/// 1. ``claim(limit:)`` hands out each claimable task to at most one owner at a time, oldest
///    first, and never blocks on tasks another owner is claiming (PostgreSQL:
///    `FOR UPDATE SKIP LOCKED`). A task is claimable when it is waiting (`pending`) or when its
///    lease has expired; a claim sets the task `downloading` with this queue's ``owner`` and a
///    lease of ``leaseDuration`` measured by one clock all owners share (the database's).
/// 2. ``renew(_:)`` extends the leases that this owner still holds, records their progress, and
///    returns the URLs it still holds; a URL missing from the answer was lost (expired and
///    claimed by another, or removed): the caller stops working on it and never finishes it.
/// 3. ``finish(_:)`` ends tasks only where this owner still holds the lease, in one transaction,
///    and returns the URLs it ended: a task is finished exactly once, by the owner holding it.
/// 4. ``release(_:)`` gives tasks this owner holds back to the queue (`pending`, no owner), with
///    their progress, for another owner or a later claim.
/// 5. ``enqueue(_:)`` adds tasks as `pending` and keeps any task already in the queue under the
///    same URL untouched; it wakes owners waiting in ``waitForWork(timeout:)``, in any process.
/// 6. A lost connection throws `StoreError.Code.unavailable`; nothing of the failed call was
///    written. The owner must then treat its leases as uncertain: renew before finishing.
/// 7. ``entries(_:)`` reads tasks as every owner sees them, without claiming or locking: their
///    last recorded state and progress, and the owner whose lease is still running;
///    ``entries(keyHashes:)`` the same, found by the ``QueueKeyHash`` of their URL.
public protocol ClaimingTaskQueue: AnyObject, Sendable {
    /// The queue's name: every owner of one queue uses the same name.
    var queue: String { get }
    /// Who this object claims as: unique per service instance (a restarted service takes a new one).
    var owner: String { get }
    /// How long a claim or a renewal holds a task without a further renewal.
    var leaseDuration: Duration { get }

    /// Adds tasks as `pending`, or `paused` when they are (no owner claims a paused task until
    /// it is resumed); returns the URLs added (a URL already queued is left as it is).
    func enqueue(_ tasks: [StoredTask]) throws(StoreError) -> [String]
    /// Claims up to `limit` tasks for ``owner``, oldest first.
    func claim(limit: Int) throws(StoreError) -> [TaskLease]
    /// Extends the leases still held, recording each one's progress; returns the URLs still held.
    func renew(_ progress: [StoredTask]) throws(StoreError) -> Set<String>
    /// Ends tasks held by ``owner`` with their final records (`finished`, `failed`, `stopped` …);
    /// returns the URLs ended by this call.
    func finish(_ outcomes: [StoredTask]) throws(StoreError) -> Set<String>
    /// Gives held tasks back to the queue as `pending`, keeping their progress; returns the URLs released.
    func release(_ tasks: [StoredTask]) throws(StoreError) -> Set<String>
    /// Suspends until work may have been added to the queue (by any owner, in any process) or
    /// `timeout` passed or the calling task was cancelled; returns whether a notification came.
    /// A `false` is no proof of an empty queue: callers claim after every return.
    func waitForWork(timeout: Duration) async -> Bool
    /// The queue's tasks among `urls`, by URL (a URL the queue does not have is left out).
    func entries(_ urls: [String]) throws(StoreError) -> [String: QueuedTask]
    /// The queue's tasks whose URL's ``QueueKeyHash`` is among `keyHashes`, by URL: how a
    /// service finds a task from an identifier made of that hash (the RPC's fleet-wide GID)
    /// when it never saw the URL. Several URLs may share a hash; callers check the one they want.
    func entries(keyHashes: [UInt64]) throws(StoreError) -> [String: QueuedTask]
    /// A page of the queue's tasks in `phase`, as every owner sees them: waiting and held tasks
    /// in the order they were added, ended ones in the order they ended. Paged as aria2 pages
    /// `tellWaiting`: a non-negative `offset` counts from the front; a negative one from the
    /// end (-1 is the last) and the page goes backwards from there. `count` ≥ 0.
    func page(_ phase: QueuePhase, offset: Int, count: Int) throws(StoreError) -> [QueuedTask]
    /// How many of the queue's tasks are in each phase now.
    func census() throws(StoreError) -> QueueCensus
    /// The tasks that ended (in the order they ended) after `cursor`, up to `limit`, with the
    /// cursor to pass next time. A nil `cursor` asks for none: only the cursor of now, so that
    /// a follower starts at the present rather than replaying history.
    func endings(after cursor: Int64?, limit: Int) throws(StoreError) -> (tasks: [QueuedTask], cursor: Int64)
    /// Suspends until tasks of the queue may have ended (finished by any owner, in any
    /// process), `timeout` passed, or the calling task was cancelled; returns whether a
    /// notification came. Callers read ``endings(after:limit:)`` after every return.
    func waitForEndings(timeout: Duration) async -> Bool
    /// Pauses, resumes, retries or removes tasks whoever holds them, as a client of any service
    /// asks: a holder loses the lease (its next renewal answers without the task, and it stops
    /// the download). Returns the URLs changed: ``QueueControl/pause`` changes waiting and held
    /// tasks, ``QueueControl/resume`` paused ones, ``QueueControl/retry`` failed and stopped
    /// ones, ``QueueControl/remove`` any that did not end, ``QueueControl/forget`` any that did.
    func control(_ urls: [String], _ change: QueueControl) throws(StoreError) -> Set<String>
    /// ``control(_:_:)`` for every task of the queue that `change` applies to (aria2's
    /// `pauseAll` and `unpauseAll` across a fleet), in one transaction; returns the URLs changed.
    func controlAll(_ change: QueueControl) throws(StoreError) -> Set<String>
    /// How the queue's database answered lately, read without waiting for it: what a caller
    /// that must answer within a bound (an RPC client's) checks before it calls.
    var reachability: QueueReachability { get }
}

extension ClaimingTaskQueue {
    /// Always reachable: a queue in memory answers at once.
    public var reachability: QueueReachability { QueueReachability() }
}

/// How a ``ClaimingTaskQueue``'s database answered lately.
public struct QueueReachability: Sendable, Hashable {
    /// Since when its calls fail for want of an answer; nil once a call succeeded.
    public var failingSince: ContinuousClock.Instant?
    /// When the call now in progress started; nil when none is.
    public var callStartedAt: ContinuousClock.Instant?

    /// A reachability.
    public init(failingSince: ContinuousClock.Instant? = nil, callStartedAt: ContinuousClock.Instant? = nil) {
        self.failingSince = failingSince
        self.callStartedAt = callStartedAt
    }

    /// Whether the call in progress has waited longer than `bound`: a new call would wait
    /// behind it.
    public func isStuck(beyond bound: Duration, now: ContinuousClock.Instant = .now) -> Bool {
        callStartedAt.map { now - $0 > bound } ?? false
    }
}

/// Keys of a task's meta info that owners of a shared queue write for the others.
public enum QueueMetaKey {
    /// The holder's download speed at its last renewal, in bytes per second
    /// (`PropertyListValue.integer`): what another service reports as the task's speed while
    /// that holder's lease runs.
    public static let speed = "peregrine.queue.speed"
}

/// What ``ClaimingTaskQueue/control(_:_:)`` does to tasks.
public enum QueueControl: Sendable, Hashable {
    /// Out of the claims until resumed; a holder loses its lease. Progress is kept.
    case pause
    /// Claimable again (waiting), with its progress.
    case resume
    /// A failed or stopped task waits again, with its progress, for any owner to claim (one
    /// that can reach its partial file resumes it): aria2 has no such call; the dashboard's
    /// retry of a failed download.
    case retry
    /// Out of the queue; a holder loses its lease. The URL may be added again.
    case remove
    /// An ended task (finished, failed, stopped) leaves the queue, as aria2's
    /// `removeDownloadResult` forgets a result; the URL may be added again. Its file stays
    /// where it was downloaded.
    case forget
}

/// Where a task of a shared queue is, as every owner sees it (``ClaimingTaskQueue/page(_:offset:count:)``).
public enum QueuePhase: Sendable, Hashable {
    /// Not held by anyone: never claimed yet, given back, its holder's lease ran out, or paused
    /// (``QueueControl/pause``; aria2's `tellWaiting` lists paused downloads too).
    case waiting
    /// Held by an owner whose lease is running.
    case held
    /// Ended: finished, failed or stopped by the owner that held it.
    case ended
    /// Every task, whatever its phase, in the order they were added: the queue as one list.
    case all
}

/// How many tasks of a shared queue are in each phase (``ClaimingTaskQueue/census()``).
public struct QueueCensus: Sendable, Hashable {
    /// Tasks no one holds.
    public var waiting: Int
    /// Tasks held under a running lease.
    public var held: Int
    /// Tasks that ended.
    public var ended: Int
    /// The number of the newest task added (additions are numbered upwards; 0 when the queue
    /// is empty): with the counts, what tells a follower that tasks were added or removed.
    public var newestAddition: Int64

    /// Every task, whatever its phase.
    public var total: Int { waiting + held + ended }

    /// A census.
    public init(waiting: Int, held: Int, ended: Int, newestAddition: Int64 = 0) {
        self.waiting = waiting
        self.held = held
        self.ended = ended
        self.newestAddition = newestAddition
    }
}

/// The 64-bit hash of a queue's key (its normalized URL) that ``ClaimingTaskQueue/enqueue(_:)``
/// stores with the task: FNV-1a over the key's UTF-8 bytes, the same on every host and in every
/// version, because services of one fleet compute it apart.
public enum QueueKeyHash {
    /// The hash of `key`.
    public static func of(_ key: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }
}

/// A task of a ``ClaimingTaskQueue`` as any owner sees it (``ClaimingTaskQueue/entries(_:)``).
public struct QueuedTask: Sendable, Hashable {
    /// The task as last recorded: `pending` while it waits (also after a lease expired),
    /// `downloading` while an owner holds it, its end (`finished`, `failed` …) once finished.
    public var task: StoredTask
    /// The owner holding a running lease on it; nil when nobody does.
    public var holder: String?
    /// How many times it was claimed.
    public var claims: Int

    /// An entry.
    public init(task: StoredTask, holder: String?, claims: Int) {
        self.task = task
        self.holder = holder
        self.claims = claims
    }
}

/// A task claimed from a ``ClaimingTaskQueue``.
public struct TaskLease: Sendable, Hashable {
    /// The task as last recorded: a task taken over from a lost owner keeps its received length
    /// and resume record, so the new owner resumes when it can reach the partial file.
    public var task: StoredTask
    /// How many times the task was claimed, this claim included (1 for a first claim).
    public var attempt: Int
    /// The owner whose lease expired before this claim, for a task taken over; nil otherwise.
    public var previousOwner: String?

    /// A lease.
    public init(task: StoredTask, attempt: Int, previousOwner: String? = nil) {
        self.task = task
        self.attempt = attempt
        self.previousOwner = previousOwner
    }
}
