import Peregrine
import PeregrineCore
import PeregrinePersistence
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a `DownloadManager` as one service of a fleet: it claims tasks from a shared
/// `ClaimingTaskQueue` (any backend; PostgreSQL's is `PostgresClaimingQueue`), downloads them
/// with the manager, renews their leases with their progress while they run, and finishes them
/// in the queue in batches (issue 20).
///
/// - **Claims.** At most ``Configuration/slots`` tasks download at once, and up to
///   ``Configuration/prefetch`` more wait in the manager's queue; free places are filled in
///   batches of up to ``Configuration/claimBatch``. When a claim finds nothing the worker
///   waits for the queue's wake-up (`LISTEN/NOTIFY` on PostgreSQL) or its renewal period,
///   whichever comes first.
/// - **Take-over.** A task claimed from an owner whose lease expired resumes from its recorded
///   offset when its partial file (the record's temporary file name) is in this manager's
///   download directory — a directory the services share — with a validator for `If-Range`;
///   otherwise it starts from zero.
/// - **Finishing.** A task's `finished` or `failed` event ends it in the queue, batched with
///   the others that end within ``Configuration/finishDelay``. The queue refuses a task whose
///   lease this worker lost: it is counted in ``Statistics/refused`` and never reported
///   finished.
/// - **A lost database.** A failing queue call stops claiming and is retried with exponential
///   backoff (``Configuration/initialBackoff`` to ``Configuration/maximumBackoff``). Downloads
///   in progress continue while their leases may still hold; once no renewal succeeded for a
///   whole lease, they are stopped (their partial files and resume records stay on disk) and
///   left to whoever holds them now.
///
/// The queue's calls block their thread for a round trip; the worker makes them one at a time
/// on the threads of `BlockingCallExecutor`, not on the cooperative pool.
public final class FleetWorker: Sendable {
    /// How a worker claims and renews.
    public struct Configuration: Sendable {
        /// Tasks held at once (the service's share of the fleet's concurrency).
        public var slots: Int
        /// Tasks claimed beyond the slots: they wait in the manager's queue, so that a slot
        /// that frees starts the next task at once, without a round trip to the queue. They hold
        /// leases, and count against the fleet's limits, while they wait.
        public var prefetch: Int
        /// How long an ended task may wait before it is finished in the queue, so that the
        /// tasks that end within it share one durable commit.
        public var finishDelay: Duration
        /// The most tasks claimed by one call.
        public var claimBatch: Int
        /// How often held leases are renewed; a third of the queue's lease duration by default.
        public var renewalInterval: Duration?
        /// The first wait after a failed queue call.
        public var initialBackoff: Duration
        /// The longest wait between attempts while the queue is unreachable.
        public var maximumBackoff: Duration
        /// The longest wait between claims while idle: how soon a lease another service let
        /// expire is taken over (new work wakes the worker at once through the queue).
        public var idleClaimInterval: Duration
        /// The most connections one task may open here, whatever it was added with: what this
        /// service's claims count against the fleet's connections per origin. Nil: as added.
        public var maxConnectionsPerTask: Int?
        /// How soon the synced progress of held tasks is recorded in the queue (with the renewal
        /// of every held lease, in one call) once it moved: what a service that takes a task over
        /// after a crash resumes from, so a crash early in a large file loses little of it.
        public var progressInterval: Duration

        /// A configuration.
        public init(
            slots: Int = 5, claimBatch: Int = 50, renewalInterval: Duration? = nil,
            initialBackoff: Duration = .milliseconds(100), maximumBackoff: Duration = .seconds(5),
            idleClaimInterval: Duration = .seconds(1), maxConnectionsPerTask: Int? = nil, prefetch: Int = 0,
            finishDelay: Duration = .milliseconds(20), progressInterval: Duration = .seconds(1)
        ) {
            self.progressInterval = max(.milliseconds(10), progressInterval)
            self.prefetch = max(0, prefetch)
            self.finishDelay = max(.zero, finishDelay)
            self.maxConnectionsPerTask = maxConnectionsPerTask.map { max(1, $0) }
            self.slots = max(1, slots)
            self.claimBatch = max(1, claimBatch)
            self.renewalInterval = renewalInterval
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
            self.idleClaimInterval = idleClaimInterval
        }
    }

    /// What a worker did so far.
    public struct Statistics: Sendable, Hashable {
        /// Tasks claimed.
        public var claimed = 0
        /// Tasks claimed from an owner whose lease had expired.
        public var takenOver = 0
        /// Of those, tasks resumed from a partial file instead of starting from zero.
        public var resumed = 0
        /// Tasks this worker ended in the queue (finished or failed).
        public var finished = 0
        /// Tasks whose end the queue refused: another owner held them by then.
        public var refused = 0
        /// Held tasks dropped because their lease was lost (renewal answered without them, or
        /// no renewal succeeded for a whole lease).
        public var lost = 0
        /// Queue calls that failed (the database unreachable).
        public var failedCalls = 0
    }

    /// The manager that downloads.
    public let manager: DownloadManager
    /// The shared queue.
    public let queue: any ClaimingTaskQueue
    /// How it claims and renews.
    public let configuration: Configuration

    private let logger: Logger
    private let state = Mutex(State())
    private let signal = FleetSignal()
    private let willStart: @Sendable (StoredTask) -> Void

    private struct State {
        /// The leases held, by URL, as claimed.
        var held: [String: StoredTask] = [:]
        /// Ended tasks waiting to be finished in the queue.
        var outcomes: [String: StoredTask] = [:]
        /// When the oldest of ``outcomes`` ended.
        var outcomesSince: ContinuousClock.Instant?
        /// Each held task's bytes at its last renewal, and when: its speed since then goes into
        /// the next renewal (``QueueMetaKey/speed``).
        var renewed: [String: (bytes: Int64, at: ContinuousClock.Instant)] = [:]
        /// Each held task's synced offset as last recorded in the queue.
        var recordedOffsets: [String: Int64] = [:]
        var statistics = Statistics()
    }

    /// A worker for `manager` on `queue`; `willStart` is called with each claimed task before
    /// the manager downloads it (a service applies the task's request options there).
    public init(
        manager: DownloadManager, queue: any ClaimingTaskQueue, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "peregrine.fleet"),
        willStart: @escaping @Sendable (StoredTask) -> Void = { _ in }
    ) {
        self.willStart = willStart
        self.manager = manager
        self.queue = queue
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "owner"] = "\(queue.owner)"
        self.logger = logger
    }

    /// What the worker did so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The URLs whose leases this worker holds.
    public var heldTasks: Set<String> { state.withLock { Set($0.held.keys) } }

    /// Claims, downloads, renews and finishes until the calling task is cancelled; then it
    /// finishes what ended and gives the tasks it still holds back to the queue (best effort:
    /// with the database gone, their leases expire instead).
    public func run() async {
        let events = manager.events()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.follow(events) }
            group.addTask { await self.listen() }
            // The queue's calls block for a round trip, or a connect timeout while the database
            // is away: on threads of their own, never the cooperative pool's.
            await withTaskExecutorPreference(BlockingCallExecutor.shared) { await self.loop() }
            group.cancelAll()
        }
        await withTaskExecutorPreference(BlockingCallExecutor.shared) { await self.shutDown() }
    }

    // MARK: The loop

    private func loop() async {
        let renewal = configuration.renewalInterval ?? queue.leaseDuration / 3
        let clock = ContinuousClock()
        var lastRenewal = clock.now
        var lastConfirmed = clock.now
        var backoff = configuration.initialBackoff
        while !Task.isCancelled {
            do throws(StoreError) {
                // Ended tasks are finished together once the oldest waited `finishDelay` (or a
                // claim's worth ended): one durable commit for all of them.
                let (ended, since) = state.withLock { ($0.outcomes.count, $0.outcomesSince) }
                if let since, ended >= configuration.claimBatch || clock.now - since >= configuration.finishDelay {
                    try flushOutcomes()
                }
                let sinceRenewal = clock.now - lastRenewal
                if sinceRenewal >= renewal || (sinceRenewal >= configuration.progressInterval && progressMoved()) {
                    try renew()
                    lastRenewal = clock.now
                    lastConfirmed = clock.now
                }
                let claimed = try claim()
                backoff = configuration.initialBackoff
                if claimed > 0 { continue }
                var wait = min(renewal, configuration.idleClaimInterval)
                if state.withLock({ !$0.held.isEmpty }) { wait = min(wait, configuration.progressInterval) }
                if let since = state.withLock({ $0.outcomesSince }) {
                    wait = min(wait, max(.zero, since + configuration.finishDelay - clock.now))
                }
                await signal.wait(timeout: wait)
            } catch {
                state.withLock { $0.statistics.failedCalls += 1 }
                logger.warning("the queue is unreachable, retrying in \(backoff): \(error.message)")
                if clock.now - lastConfirmed >= queue.leaseDuration { dropAll() }
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, configuration.maximumBackoff)
            }
        }
    }

    /// Fills free slots and the prefetch; returns how many tasks it claimed. An ended task frees
    /// its slot at once, while it waits to be finished in the queue. With a prefetch, a claim
    /// waits until half of it is free (unless a slot would idle), so that claims and additions
    /// come in batches.
    private func claim() throws(StoreError) -> Int {
        let held = state.withLock { $0.held.count }
        let free = configuration.slots + configuration.prefetch - held
        guard free > 0, held < configuration.slots || free >= max(1, configuration.prefetch / 2) else { return 0 }
        let leases = try queue.claim(limit: min(free, configuration.claimBatch))
        start(leases)
        return leases.count
    }

    /// Hands claimed tasks to the manager: new ones in one addition per list (one durable write
    /// of the store for the batch), the others one by one.
    private func start(_ leases: [TaskLease]) {
        var fresh: [String: [(task: StoredTask, item: DownloadItem)]] = [:]
        for lease in leases {
            let task = lease.task
            state.withLock { state in
                state.held[task.urlString] = task
                state.statistics.claimed += 1
                if lease.previousOwner != nil { state.statistics.takenOver += 1 }
            }
            willStart(task)
            // What the task was added with, within this service's connections per task.
            var connections = task.maxConnections
            if let cap = configuration.maxConnectionsPerTask { connections = min(connections ?? cap, cap) }
            let speedLimit = task.speedLimit.flatMap { try? SpeedLimit(bytesPerSecond: $0) }
            do throws(DownloadManagerError) {
                var local = manager.task(task.urlString)
                if let known = local, isNewerElsewhere(task, than: known.record) {
                    // Known from an earlier lease here, but another service got further since:
                    // its synced bytes win, and this service's older copy goes with its file.
                    forget(task.urlString)
                    local = nil
                }
                if let local {
                    // Known from an earlier lease of this service: continue it where it is. A
                    // partial file another holder left since, behind, is nobody's now.
                    if let other = task.temporaryFileName, other != local.record.temporaryFileName,
                        !other.contains("/")
                    {
                        unlink(manager.downloadDirectory + "/" + other)
                    }
                    _ = try manager.resumeTasks([task.urlString])
                } else if let partial = partialFile(of: task) {
                    try manager.resumeOuterDownload(
                        urlString: task.urlString, partialFile: partial.path, validator: partial.validator,
                        expectedLength: task.expectedLength, in: DownloadListKey(task.list))
                    // The copy is the manager's now; the previous owner's file is left over.
                    unlink(partial.path)
                    _ = manager.engine.setMaxConnections(connections, forTask: task.urlString)
                    _ = manager.setSpeedLimit(speedLimit, forTask: task.urlString)
                    _ = try? manager.engine.setMirrors(task.mirrors, forTask: task.urlString)
                    _ = try manager.resumeTasks([task.urlString])
                    state.withLock { $0.statistics.resumed += 1 }
                } else {
                    let item = DownloadItem(
                        task.urlString, preferredFileName: task.preferredFileName, checksum: task.checksum,
                        maxConnections: connections, startsImmediately: true, speedLimit: speedLimit,
                        mirrors: task.mirrors)
                    fresh[task.list, default: []].append((task, item))
                }
            } catch {
                failToStart(task, error)
            }
        }
        for (list, batch) in fresh {
            do throws(DownloadManagerError) {
                let addition = try manager.download(batch.map(\.item), in: DownloadListKey(list)).addition
                // What the manager refused (an invalid URL or checksum) ends here, failed, rather
                // than holding its lease for ever.
                for refused in addition.invalid {
                    failed(refused.urlString, batch, DownloadManagerError(.invalidURL, "\(refused.error)"))
                }
                for refused in addition.invalidChecksums {
                    failed(refused.urlString, batch, DownloadManagerError(.invalidChecksum, "\(refused.error)"))
                }
            } catch {
                for (task, _) in batch { failToStart(task, error) }
            }
        }
    }

    private func failed(
        _ urlString: String, _ batch: [(task: StoredTask, item: DownloadItem)], _ error: DownloadManagerError
    ) {
        if let task = batch.first(where: { $0.item.urlString == urlString })?.task { failToStart(task, error) }
    }

    /// Ends a claimed task that the manager could not take as failed (finished in the queue
    /// with the others).
    private func failToStart(_ task: StoredTask, _ error: DownloadManagerError) {
        logger.error("cannot start \(task.urlString): \(error)")
        var failed = task
        failed.state = .failed(FailureReason(.unknown, message: "\(error)"))
        state.withLock { state in
            state.held[task.urlString] = nil
            if state.outcomes.isEmpty { state.outcomesSince = .now }
            state.outcomes[task.urlString] = failed
        }
    }

    /// A held task as the queue keeps it: the manager's record (its progress, its partial file,
    /// its validator) with what the task was added with to the fleet, which the manager does not
    /// keep or keeps lowered to this service's limits — its meta info (the options), mirrors,
    /// connections and speed limit — so that a service that takes it over gets them too.
    private func queueRecord(of claimed: StoredTask) -> StoredTask {
        guard let snapshot = manager.task(claimed.urlString) else { return claimed }
        var task = StoredTask(snapshot.record)
        task.metaInfo.merge(claimed.metaInfo) { _, added in added }
        // A speed is a renewal's (a previous holder's stays out of this one's records).
        task.metaInfo[QueueMetaKey.speed] = nil
        task.mirrors = claimed.mirrors
        task.maxConnections = claimed.maxConnections
        task.speedLimit = claimed.speedLimit
        return task
    }

    /// Whether the queue records more synced bytes of a task, in a partial file of another
    /// holder that this service can read, than this service's own copy has.
    private func isNewerElsewhere(_ task: StoredTask, than record: DownloadTaskRecord) -> Bool {
        guard let other = task.temporaryFileName, other != record.temporaryFileName, !other.contains("/"),
            let offset = task.resumeRecord?.offset, offset > (record.resumeRecord?.offset ?? 0),
            record.state != .finished
        else { return false }
        var status = stat()
        return stat(manager.downloadDirectory + "/" + other, &status) == 0 && Int64(status.st_size) >= offset
    }

    /// Deletes this service's copy of a task, with its partial file (out of its list, then for
    /// good when the manager keeps a trash).
    private func forget(_ url: String) {
        do throws(DownloadManagerError) {
            if manager.indexPath(ofTask: url) != nil { try manager.deleteTasks([url], keepFinishedFile: true) }
            if let list = manager.task(url)?.record.list { try manager.cleanupToDeleteTasks([url], in: list) }
        } catch {
            logger.error("cannot delete this service's copy of \(url): \(error)")
        }
    }

    /// The previous owner's partial file, cut to the offset it recorded (bytes after it may not
    /// have reached the disk), when it is in this manager's download directory.
    private func partialFile(of task: StoredTask) -> (path: String, validator: ResumeValidator?)? {
        guard task.receivedLength > 0, let name = task.temporaryFileName, let resume = task.resumeRecord,
            resume.offset > 0, !name.contains("/")
        else { return nil }
        let path = manager.downloadDirectory + "/" + name
        var status = stat()
        guard stat(path, &status) == 0, Int64(status.st_size) >= resume.offset else { return nil }
        guard truncate(path, off_t(resume.offset)) == 0 else { return nil }
        return (path, resume.validator)
    }

    /// Whether a held task's synced offset moved since the queue last recorded it.
    private func progressMoved() -> Bool {
        state.withLock { state in
            state.held.keys.contains { url in
                (manager.task(url)?.record.resumeRecord?.offset ?? 0) != (state.recordedOffsets[url] ?? 0)
            }
        }
    }

    private func renew() throws(StoreError) {
        let progress = state.withLock { state in
            let now = ContinuousClock.now
            let progress = state.held.values.map { claimed -> StoredTask in
                var task = queueRecord(of: claimed)
                task.state = .downloading
                state.recordedOffsets[task.urlString] = task.resumeRecord?.offset ?? 0
                // The speed since the last renewal (from the bytes received, live; the record's
                // progress moves at checkpoints), for the other services' clients.
                let url = task.urlString
                let bytes = manager.task(url)?.receivedBytes ?? task.receivedLength
                if let last = state.renewed[url], now > last.at {
                    let elapsed = (now - last.at).components
                    let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
                    let speed = Double(max(0, bytes - last.bytes)) / seconds
                    task.metaInfo[QueueMetaKey.speed] = .integer(Int64(speed.rounded()))
                }
                state.renewed[url] = (bytes, now)
                return task
            }
            state.renewed = state.renewed.filter { state.held[$0.key] != nil }
            state.recordedOffsets = state.recordedOffsets.filter { state.held[$0.key] != nil }
            return progress
        }
        guard !progress.isEmpty else { return }
        let kept = try queue.renew(progress)
        let lost = state.withLock { state -> [String] in
            let lost = state.held.keys.filter { !kept.contains($0) }
            for url in lost { state.held[url] = nil }
            state.statistics.lost += lost.count
            return lost
        }
        guard !lost.isEmpty else { return }
        logger.warning(
            "lost \(lost.count) leases (taken over, paused or removed through a service); stopping them here")
        _ = try? manager.stopTasks(lost)
        // Removed from the queue (a client's `remove`, through any service): this service's
        // copy goes too, with its partial file. A paused or taken-over task keeps it, for a
        // resume here or a take-over from storage both services reach.
        guard let present = try? queue.entries(lost) else { return }
        let removed = lost.filter { present[$0] == nil }
        guard !removed.isEmpty else { return }
        for url in removed { forget(url) }
    }

    private func flushOutcomes() throws(StoreError) {
        let outcomes = state.withLock { Array($0.outcomes.values) }
        guard !outcomes.isEmpty else { return }
        let ended = try queue.finish(outcomes)
        state.withLock { state in
            for outcome in outcomes { state.outcomes[outcome.urlString] = nil }
            if state.outcomes.isEmpty { state.outcomesSince = nil }
            state.statistics.finished += ended.count
            state.statistics.refused += outcomes.count - ended.count
        }
        if ended.count < outcomes.count {
            logger.warning("\(outcomes.count - ended.count) tasks ended here had been taken over by other services")
        }
    }

    /// Stops every held download (their files stay) and forgets the leases: no renewal
    /// succeeded for a whole lease, so others may hold them now.
    private func dropAll() {
        let urls = state.withLock { state -> [String] in
            let urls = Array(state.held.keys)
            state.held = [:]
            state.statistics.lost += urls.count
            return urls
        }
        guard !urls.isEmpty else { return }
        logger.warning("stopping \(urls.count) downloads whose leases could not be renewed")
        _ = try? manager.stopTasks(urls)
    }

    /// Ends the service's part: held tasks that ended here are finished in the queue (also those
    /// whose events the follower had not read yet, and those that ended while being stopped);
    /// the others are stopped, and once their files are synced, handed back with the bytes on
    /// disk as their progress.
    private func shutDown() async {
        let urls = state.withLock { Array($0.held.keys) }
        _ = try? manager.stopTasks(urls)
        if !(await manager.engine.waitUntilTransfersDrain(atMost: Self.drainLimit)) {
            logger.warning("transfers still running after \(Self.drainLimit); their last checkpoints are handed back")
        }
        do throws(StoreError) {
            let held = state.withLock { state in
                defer { state.held = [:] }
                var unfinished: [StoredTask] = []
                for claimed in state.held.values {
                    let ended = manager.task(claimed.urlString).map(\.state)
                    switch ended {
                    case .finished?, .failed?:
                        var outcome = queueRecord(of: claimed)
                        outcome.state = ended!
                        if state.outcomes.isEmpty { state.outcomesSince = .now }
                        state.outcomes[claimed.urlString] = outcome
                    default:
                        unfinished.append(claimed)
                    }
                }
                return unfinished
            }
            try flushOutcomes()
            guard !held.isEmpty else { return }
            let progress = held.map { claimed -> StoredTask in
                queueRecord(of: claimed)
            }
            _ = try queue.release(progress)
        } catch {
            logger.warning("cannot hand the held tasks back; their leases will expire: \(error.message)")
        }
    }

    /// How long a stop waits for the transfers to sync their files.
    static let drainLimit: Duration = .seconds(10)

    // MARK: Events

    /// Records the end of held tasks from the manager's events, and wakes the loop.
    private func follow(_ events: AsyncStream<DownloadManagerEvent>) async {
        for await event in events {
            guard case .task(let engineEvent) = event else { continue }
            let url: String
            let ended: DownloadState
            switch engineEvent {
            case .finished(let finishedURL, _):
                url = finishedURL
                ended = .finished
            case .failed(let failedURL, let reason):
                url = failedURL
                ended = .failed(reason)
            default:
                continue
            }
            let recorded = state.withLock { state -> Bool in
                guard let claimed = state.held.removeValue(forKey: url) else { return false }
                var outcome = queueRecord(of: claimed)
                outcome.state = ended
                if state.outcomes.isEmpty { state.outcomesSince = .now }
                state.outcomes[url] = outcome
                return true
            }
            if recorded { signal.signal() }
        }
    }

    /// Wakes the loop when the queue says work was added.
    private func listen() async {
        while !Task.isCancelled {
            if await queue.waitForWork(timeout: .seconds(60)) { signal.signal() }
        }
    }
}

/// A wake-up for the worker's loop: ``signal()`` ends the current or next ``wait(timeout:)``.
final class FleetSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var generation = 0
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at a signal (one that came since the last wait included) or after `timeout`.
    func wait(timeout: Duration) async {
        let generation = state.withLock { state -> Int? in
            if state.pending {
                state.pending = false
                return nil
            }
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard state.generation == generation else { return nil }
                guard let waiter = state.waiter else {
                    // Not registered yet: the registration finds this and returns at once.
                    state.pending = true
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            waiter?.resume()
        }
        defer { timer.cancel() }
        await withCheckedContinuation { continuation in
            let early = state.withLock { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if early { continuation.resume() }
        }
        // A later wait must not be ended by this one's timer.
        state.withLock { $0.generation += 1 }
    }
}
