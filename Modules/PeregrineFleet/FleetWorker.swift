import CoreMetrics
import Peregrine
import PeregrineCore
import PeregrinePersistence
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
///   in progress continue while their leases surely hold: once no renewal succeeded for two
///   thirds of a lease (measured from when the last successful renewal was sent, so before the
///   database's own clock can let the lease expire), they are stopped — prefetched tasks
///   included, which then never start — their partial files and resume records stay on disk,
///   and they are left to whoever claims them next.
/// - **A file placed while cut off.** The temporary name of a file this worker placed stays a
///   hard link to it until the queue recorded the task finished. A service that takes the task
///   over (the database let the lease expire before the end was recorded) finds the placed file
///   through that link and finishes the task with it instead of downloading it a second time.
///
/// The queue's calls block their thread for a round trip; the worker makes them one at a time
/// on a thread of its own (a `BlockingCallExecutor`), never on the cooperative pool, and never
/// behind its clients' calls.
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
    private let state = Locked(State())
    private let signal = FleetSignal()
    private let willStart: @Sendable (StoredTask) -> Void
    private let taskMetadata: @Sendable (String) -> Logger.Metadata
    private let metrics: FleetMetrics

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
        /// When the last call that confirmed every held lease was sent: the leases hold for at
        /// least a lease duration from then, on the database's clock.
        var confirmedAt: ContinuousClock.Instant?
        /// Placed files found through a previous holder's temporary name: the name is removed
        /// once the queue recorded the task finished here (by URL: temporary and placed names).
        var adoptedLinks: [String: (temporary: String, placed: String)] = [:]
        /// Tasks stopped for want of a renewal: once the queue answers again, those removed from
        /// it meanwhile (through any service) are deleted here too.
        var dropped: Set<String> = []
        /// Whether ``drain()`` was called, and whether the held tasks not started went back.
        var draining = false
        var handedBackWaiting = false
        var statistics = Statistics()
    }

    /// A worker for `manager` on `queue`; `willStart` is called with each claimed task before
    /// the manager downloads it (a service applies the task's request options there), and
    /// `taskMetadata` gives what the log lines of a task (claimed, taken over, handed back) say
    /// of it beside its URL (a service adds the GID its clients know it by). Its metrics
    /// (`peregrine_fleet_…`) go to `metricsFactory`, else to the process's `MetricsSystem`.
    public init(
        manager: DownloadManager, queue: any ClaimingTaskQueue, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "peregrine.fleet"),
        taskMetadata: @escaping @Sendable (_ url: String) -> Logger.Metadata = { _ in [:] },
        metricsFactory: (any MetricsFactory)? = nil,
        willStart: @escaping @Sendable (StoredTask) -> Void = { _ in }
    ) {
        self.metrics = FleetMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        self.taskMetadata = taskMetadata
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

    /// Begins a drain, as a service about to stop does: no more claims, no held task starts
    /// here any more, and the held tasks not started yet go back to the queue at once (for the
    /// other services); those downloading go on and are finished in the queue as they end.
    /// ``run()`` goes on until cancelled, which hands back what is still held then.
    public func drain() {
        let first = state.withLock { state in
            defer { state.draining = true }
            return !state.draining
        }
        guard first else { return }
        manager.engine.holdsWaitingTasks = true
        signal.signal()
    }

    /// Whether a drain is done: nothing is held here any more and every end is in the queue.
    public var isDrained: Bool {
        state.withLock { $0.draining && $0.handedBackWaiting && $0.held.isEmpty && $0.outcomes.isEmpty }
    }

    /// Claims, downloads, renews and finishes until the calling task is cancelled; then it
    /// finishes what ended and gives the tasks it still holds back to the queue (best effort:
    /// with the database gone, their leases expire instead).
    public func run() async {
        let events = manager.events()
        manager.engine.holdsPlacedTemporaryNames = true
        // The loop's thread: its renewals never wait behind other blocking calls of the process.
        let executor = BlockingCallExecutor(threads: 1)
        defer { executor.stopWhenIdle() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.follow(events) }
            group.addTask { await self.listen() }
            group.addTask { await self.guardLeases() }
            // The queue's calls block for a round trip, or a call's deadline while the database
            // is away: on a thread of their own, never the cooperative pool's.
            await withTaskExecutorPreference(executor) { await self.loop() }
            group.cancelAll()
        }
        await withTaskExecutorPreference(executor) { await self.shutDown() }
    }

    /// The share of a lease after which held tasks are stopped when no renewal succeeded: two
    /// thirds, so that a renewal at a third has a third of a lease to come through, and the
    /// transfers stop a third of a lease before the database may let another service claim.
    static func stopAfter(lease: Duration) -> Duration { lease * 2 / 3 }

    /// Stops the held tasks once their leases are no longer surely held: checked on a timer of
    /// its own, so that a queue call waiting for its deadline does not delay it.
    private func guardLeases() async {
        let limit = Self.stopAfter(lease: queue.leaseDuration)
        let period = min(.milliseconds(250), max(.milliseconds(5), queue.leaseDuration / 20))
        while !Task.isCancelled {
            try? await Task.sleep(for: period)
            let since = state.withLock { state -> Duration? in
                guard !state.held.isEmpty, let confirmed = state.confirmedAt else { return nil }
                let since = ContinuousClock.now - confirmed
                return since >= limit ? since : nil
            }
            if let since { await dropAll(unconfirmedFor: since) }
        }
    }

    // MARK: The loop

    private func loop() async {
        let renewal = configuration.renewalInterval ?? queue.leaseDuration / 3
        let clock = ContinuousClock()
        var lastRenewal = clock.now
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
                }
                try forgetDroppedRemovals()
                if state.withLock({ $0.draining && !$0.handedBackWaiting }) { try handBackWaiting() }
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
                let first = state.withLock { state in
                    state.statistics.failedCalls += 1
                    return state.statistics.failedCalls == 1 || backoff == configuration.initialBackoff
                }
                if first {
                    logger.warning("the queue is unreachable, retrying: \(error.message)")
                } else {
                    logger.debug("the queue is still unreachable, retrying in \(backoff): \(error.message)")
                }
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
        let (held, draining) = state.withLock { ($0.held.count, $0.draining) }
        guard !draining else { return 0 }
        let free = configuration.slots + configuration.prefetch - held
        guard free > 0, held < configuration.slots || free >= max(1, configuration.prefetch / 2) else { return 0 }
        let sent = ContinuousClock.now
        let leases = try timed("claim") { () throws(StoreError) in
            try queue.claim(limit: min(free, configuration.claimBatch))
        }
        // The new leases run from `sent` at least; older ones from the last renewal.
        state.withLock { state in
            if state.held.isEmpty || state.confirmedAt == nil { state.confirmedAt = sent }
        }
        start(leases)
        return leases.count
    }

    /// Hands claimed tasks to the manager: new ones in one addition per list (one durable write
    /// of the store for the batch), the others one by one.
    private func start(_ leases: [TaskLease]) {
        var fresh: [String: [(task: StoredTask, item: DownloadItem)]] = [:]
        for lease in leases {
            let task = lease.task
            // One line a claim, for the operator: which task, and from whom when taken over.
            if let owner = lease.previousOwner {
                logger.info("took over", metadata: metadata(of: task.urlString, ["from": "\(owner)"]))
            } else {
                logger.info("claimed", metadata: metadata(of: task.urlString))
            }
            if lease.previousOwner != nil, adoptPlacedFile(of: task, from: lease.previousOwner!) { continue }
            state.withLock { state in
                state.held[task.urlString] = task
                state.statistics.claimed += 1
                if lease.previousOwner != nil { state.statistics.takenOver += 1 }
            }
            metrics.claims.increment()
            if lease.previousOwner != nil { metrics.takeOvers.increment() }
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
                        expectedLength: task.expectedLength, in: DownloadListKey(task.list),
                        subdirectory: task.subdirectory)
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
                        mirrors: task.mirrors, subdirectory: task.subdirectory)
                    fresh[task.list, default: []].append((task, item))
                }
            } catch {
                failToStart(task, error)
            }
        }
        for (list, batch) in fresh {
            // A list in manual mode takes them at the end of its last section.
            let addition = manager.downloadInAnyMode(batch.map(\.item), in: DownloadListKey(list)).addition
            // What the manager refused (an invalid URL or checksum) ends here, failed, rather
            // than holding its lease for ever.
            for refused in addition.invalid {
                failed(refused.urlString, batch, DownloadManagerError(.invalidURL, "\(refused.error)"))
            }
            for refused in addition.invalidChecksums {
                failed(refused.urlString, batch, DownloadManagerError(.invalidChecksum, "\(refused.error)"))
            }
        }
    }

    /// A task taken over whose previous holder placed its file but could not record the end
    /// (cut off from the database until its lease expired): its temporary name, in the queue's
    /// record, is still a hard link to the placed file. The task is finished here with that
    /// file, and the name removed once the queue recorded it; true when it was.
    private func adoptPlacedFile(of task: StoredTask, from previousOwner: String) -> Bool {
        guard let temporary = task.temporaryFileName, !temporary.contains("/") else { return false }
        let candidates = [task.fileName, task.preferredFileName].compactMap { $0 }.filter { !$0.contains("/") }
        guard let placed = manager.engine.placedFile(linkedFrom: temporary, candidates: candidates) else {
            return false
        }
        var outcome = task
        outcome.state = .finished
        outcome.fileName = placed
        outcome.resumeRecord = nil
        outcome.metaInfo[QueueMetaKey.speed] = nil
        var status = stat()
        if stat(manager.downloadDirectory + "/" + placed, &status) == 0 {
            outcome.receivedLength = Int64(status.st_size)
            if outcome.expectedLength == nil { outcome.expectedLength = Int64(status.st_size) }
        }
        if outcome.finishedAt == nil { outcome.finishedAt = Date() }
        logger.notice(
            "\(task.urlString) was placed as \(placed) by \(previousOwner) before its end reached the queue; finished with that file"
        )
        metrics.claims.increment()
        metrics.takeOvers.increment()
        state.withLock { state in
            state.statistics.claimed += 1
            state.statistics.takenOver += 1
            if state.outcomes.isEmpty { state.outcomesSince = .now }
            state.outcomes[task.urlString] = outcome
            state.adoptedLinks[task.urlString] = (temporary, placed)
        }
        return true
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
    /// have reached the disk) or, when it stopped the task without reaching the queue, to the
    /// synced length it marked on the file (``syncedAttribute``), when the file is in this
    /// manager's download directory.
    private func partialFile(of task: StoredTask) -> (path: String, validator: ResumeValidator?)? {
        guard let name = task.temporaryFileName, !name.contains("/") else { return nil }
        let path = manager.downloadDirectory + "/" + name
        var status = stat()
        // A second link is a placed file's (``adoptPlacedFile(of:from:)``): never cut.
        guard stat(path, &status) == 0, status.st_nlink == 1 else { return nil }
        let recorded = task.resumeRecord?.offset ?? 0
        let marked = Self.markedOffset(of: path, status: status, validator: task.resumeRecord?.validator)
        let offset = max(recorded, marked ?? 0)
        guard offset > 0, Int64(status.st_size) >= offset, task.receivedLength > 0 || marked != nil,
            let resume = task.resumeRecord
        else { return nil }
        guard truncate(path, off_t(offset)) == 0 else { return nil }
        _ = ExtendedAttributes.remove?(path, Self.syncedAttribute)
        if let marked, marked > recorded {
            logger.notice(
                "\(task.urlString): resuming from the \(marked) bytes its previous holder synced, not the \(recorded) the queue recorded"
            )
        }
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
        let sent = ContinuousClock.now
        let kept = try timed("renew") { () throws(StoreError) in try queue.renew(progress) }
        let lost = state.withLock { state -> [String] in
            state.confirmedAt = sent
            let lost = state.held.keys.filter { !kept.contains($0) }
            for url in lost { state.held[url] = nil }
            state.statistics.lost += lost.count
            return lost
        }
        metrics.renewedLeases.increment(by: Int64(kept.count))
        guard !lost.isEmpty else { return }
        metrics.lostLeases.increment(by: Int64(lost.count))
        logger.warning(
            "lost \(lost.count) leases (taken over, paused or removed through a service); stopping them here")
        _ = try? manager.stopTasks(lost)
        // Removed from the queue (a client's `remove`, through any service): this service's
        // copy goes too, with its partial file. A paused or taken-over task keeps it, for a
        // resume here or a take-over from storage both services reach.
        guard let present = try? timed("entries", { () throws(StoreError) in try queue.entries(lost) }) else { return }
        let removed = lost.filter { present[$0] == nil }
        guard !removed.isEmpty else { return }
        for url in removed { forget(url) }
    }

    private func flushOutcomes() throws(StoreError) {
        let outcomes = state.withLock { Array($0.outcomes.values) }
        guard !outcomes.isEmpty else { return }
        let ended = try timed("finish") { () throws(StoreError) in try queue.finish(outcomes) }
        metrics.ended.increment(by: Int64(ended.count))
        let adopted = state.withLock { state in
            for outcome in outcomes { state.outcomes[outcome.urlString] = nil }
            if state.outcomes.isEmpty { state.outcomesSince = nil }
            state.statistics.finished += ended.count
            state.statistics.refused += outcomes.count - ended.count
            var adopted: [String: (temporary: String, placed: String)] = [:]
            for outcome in outcomes {
                adopted[outcome.urlString] = state.adoptedLinks.removeValue(forKey: outcome.urlString)
            }
            return adopted
        }
        // The queue records these ended here: a placed file's second name is no longer needed
        // to find it. One refused stays: the service that took the task over finds the file by it.
        for url in ended {
            if let link = adopted[url] {
                manager.engine.removeTemporaryName(link.temporary, linkedTo: link.placed)
            } else {
                manager.engine.releasePlacedTemporaryName(ofTask: url)
            }
        }
        if ended.count < outcomes.count {
            logger.warning("\(outcomes.count - ended.count) tasks ended here had been taken over by other services")
        }
    }

    /// A drain's first step: the held tasks that wait in the manager (claimed ahead, or queued
    /// behind the slots) are stopped here and released to the queue, where other services
    /// claim them. Nothing of theirs was downloaded here since their claim, so there is no
    /// progress to sync.
    private func handBackWaiting() throws(StoreError) {
        let urls = state.withLock { Array($0.held.keys) }
        let waiting = urls.filter { manager.task($0)?.state == .pending }
        if !waiting.isEmpty {
            _ = try? manager.stopTasks(waiting)
            let tasks = state.withLock { state in waiting.compactMap { state.held[$0] } }.map(queueRecord(of:))
            let released = try timed("release") { () throws(StoreError) in try queue.release(tasks) }
            logHandedBack(tasks, released)
            state.withLock { state in
                for url in waiting {
                    state.held[url] = nil
                    state.renewed[url] = nil
                    state.recordedOffsets[url] = nil
                }
            }
            logger.info(
                "draining: handed back the tasks not started here", metadata: ["count": "\(released.count)"])
        }
        state.withLock { $0.handedBackWaiting = true }
    }

    /// Stops every held download (their files stay) and forgets the leases: no renewal
    /// succeeded for two thirds of a lease, so others may hold them soon.
    private func dropAll(unconfirmedFor since: Duration) async {
        let urls = state.withLock { state -> [String] in
            let urls = Array(state.held.keys)
            state.held = [:]
            state.confirmedAt = nil
            state.statistics.lost += urls.count
            state.dropped.formUnion(urls)
            return urls
        }
        guard !urls.isEmpty else { return }
        metrics.lostLeases.increment(by: Int64(urls.count))
        _ = try? manager.stopTasks(urls)
        logger.warning(
            "stopped \(urls.count) downloads: no lease renewal came through for \(since) (their partial files stay for whoever claims them next)"
        )
        _ = await manager.engine.waitUntilTransfersDrain(atMost: Self.drainLimit)
        markSynced(urls)
    }

    /// Deletes this service's copies of the dropped tasks that left the queue meanwhile (a
    /// client's `remove` through any service), as a renewal that answers without them does.
    private func forgetDroppedRemovals() throws(StoreError) {
        let dropped = state.withLock { $0.dropped.subtracting($0.held.keys) }
        guard !dropped.isEmpty else { return }
        let present = try timed("entries") { () throws(StoreError) in try queue.entries(Array(dropped)) }
        state.withLock { $0.dropped.subtract(dropped) }
        for url in dropped where present[url] == nil { forget(url) }
    }

    // MARK: Partial files handed over

    /// The extended attribute that tells the next holder of a task how far its partial file is
    /// synced, when this service stopped it but could not record that in the queue.
    static let syncedAttribute = "user.peregrine.synced"

    /// Marks the partial files of stopped tasks with their synced length (``syncedAttribute``),
    /// the file's size and modification time, and the validator the bytes belong to: a service
    /// that takes a task over resumes from there rather than from the older offset in the queue
    /// while nothing wrote the file since. Best effort: without extended attributes, the queue's
    /// offset is used.
    private func markSynced(_ urls: [String]) {
        for url in urls {
            guard let record = manager.task(url)?.record, record.state != .finished,
                let resume = record.resumeRecord, resume.offset > 0
            else { continue }
            let path = manager.downloadDirectory + "/" + record.temporaryFileName
            var status = stat()
            guard stat(path, &status) == 0, Int64(status.st_size) >= resume.offset else { continue }
            let mark = Self.syncedMark(offset: resume.offset, status: status, validator: resume.validator)
            _ = mark.withCString { ExtendedAttributes.set?(path, Self.syncedAttribute, $0, strlen($0), 0) }
        }
    }

    private static func syncedMark(offset: Int64, status: stat, validator: ResumeValidator?) -> String {
        let validator = validator.map { String(describing: $0) } ?? "-"
        return "1 \(offset) \(status.st_size) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec) \(validator)"
    }

    /// The synced length a previous holder marked on the partial file at `path`, when the mark
    /// matches the file as it is (nothing wrote it since) and the validator the queue records.
    private static func markedOffset(of path: String, status: stat, validator: ResumeValidator?) -> Int64? {
        var buffer = [CChar](repeating: 0, count: 1024)
        guard let get = ExtendedAttributes.get else { return nil }
        let length = get(path, syncedAttribute, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let text = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let space = text.dropFirst(2).firstIndex(of: " "),
            let offset = Int64(text.dropFirst(2)[..<space]), offset <= Int64(status.st_size),
            text == syncedMark(offset: offset, status: status, validator: validator)
        else { return nil }
        return offset
    }

    /// Ends the service's part: held tasks that ended here are finished in the queue (also those
    /// whose events the follower had not read yet, and those that ended while being stopped);
    /// the others are stopped, and once their files are synced, handed back with the bytes on
    /// disk as their progress. While the database does not answer, nothing waits for it: the
    /// partial files are marked (``syncedAttribute``) and the leases left to expire.
    private func shutDown() async {
        let urls = state.withLock { Array($0.held.keys) }
        _ = try? manager.stopTasks(urls)
        if !(await manager.engine.waitUntilTransfersDrain(atMost: Self.drainLimit)) {
            logger.warning("transfers still running after \(Self.drainLimit); their last checkpoints are handed back")
        }
        // For a service that takes them over should the queue not hear of it below.
        markSynced(urls)
        if let since = queue.reachability.failingSince {
            // Another call would wait for its deadline: the stop is not held up for it.
            logger.warning(
                "the queue's database has not answered for \(ContinuousClock.now - since): the held tasks are not handed back; their leases expire, and whoever claims them next resumes from their partial files"
            )
            return
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
            logHandedBack(progress, try timed("release") { () throws(StoreError) in try queue.release(progress) })
        } catch {
            logger.warning("cannot hand the held tasks back; their leases will expire: \(error.message)")
        }
    }

    /// How long a stop waits for the transfers to sync their files.
    static let drainLimit: Duration = .seconds(10)

    /// A task's log metadata: its URL (credentials hidden) and what the service adds.
    private func metadata(of url: String, _ extra: Logger.Metadata = [:]) -> Logger.Metadata {
        var metadata = taskMetadata(url)
        metadata["url"] = "\(DownloadURL.loggable(url))"
        return metadata.merging(extra) { $1 }
    }

    /// A call to the queue, timed (answered or failed); a failure is counted.
    private func timed<T>(_ call: String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let start = ContinuousClock.now
        do {
            let result = try body()
            metrics.time(call, ContinuousClock.now - start)
            return result
        } catch {
            metrics.time(call, ContinuousClock.now - start)
            metrics.failedCalls.increment()
            throw error
        }
    }

    /// One line a task handed back, with the bytes another service resumes from.
    private func logHandedBack(_ tasks: [StoredTask], _ released: Set<String>) {
        metrics.handedBack.increment(by: Int64(released.count))
        for task in tasks where released.contains(task.urlString) {
            logger.info(
                "handed back",
                metadata: metadata(of: task.urlString, ["offset": "\(task.resumeRecord?.offset ?? 0)"]))
        }
    }

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

    private let state = Locked(State())

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

/// `setxattr`, `getxattr` and `removexattr`, looked up once: Glibc's Swift module does not
/// declare `<sys/xattr.h>`. Nil where the C library has none.
private enum ExtendedAttributes {
    typealias Set = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawPointer, Int, Int32) -> Int32
    typealias Get = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer, Int) -> Int
    typealias Remove = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32

    static let set: Set? = dlsym(nil, "setxattr").map { unsafeBitCast($0, to: Set.self) }
    static let get: Get? = dlsym(nil, "getxattr").map { unsafeBitCast($0, to: Get.self) }
    static let remove: Remove? = dlsym(nil, "removexattr").map { unsafeBitCast($0, to: Remove.self) }
}
