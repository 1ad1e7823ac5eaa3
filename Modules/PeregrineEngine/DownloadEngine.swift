import Dispatch
import Logging
import PeregrineChecksums
import PeregrineCore
import PeregrineTransport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The scheduler and state machine under a download manager: tasks keyed by URL string, each
/// list with its own concurrency limit and waiting queue, transfers through any `Transport`,
/// files that appear in the download directory only when complete, and resume records that
/// never claim more than is on disk.
///
/// ## Threads
/// Every member is safe to call from any thread. Operations take one lock, change the tasks'
/// ``TaskStateMachine``s, and return at once with what actually changed (as
/// SDEDownloadManager's API does); transfers start, pause and stop right after, outside the
/// lock. Transfer events are handled on the transport's thread: file work there is bounded (a
/// rate-limited `fsync` for checkpoints, a rename at the end). Events of ``events()`` are
/// delivered in the order the state changed. Handlers (``taskCompletionHandler``, per-call
/// completions, activity handlers) run outside the lock, on the thread that caused them — the
/// transport's, a timer's, or the caller's — and may call the engine.
///
/// ## Plug-ins
/// The configuration takes a ``RequestAdapter`` and a ``RetryPolicy`` (authentication), a
/// ``TaskFileVerifier`` (checksums, hashed while downloading), a ``TaskRecordObserver`` (a
/// store, which hands records back through ``restore(_:)``) and a ``FileKindClassifier``
/// (thumbnails). The list model drives the queue order with ``setListOrder(_:in:)``.
public final class DownloadEngine: Sendable {
    /// The directory files are downloaded to.
    public let directory: DownloadDirectory
    /// The transport transfers run on.
    public let transport: any Transport
    let configuration: Configuration
    /// The engine's state, touched only in steps of its coordinator (its own, or the queue's
    /// that the engine is part of).
    let state: Coordinated<EngineState>
    let broadcaster = EventBroadcaster<EngineEvent>()
    /// The verifier in use: the configured one, else checksum verification unless it is off.
    let verifier: (any TaskFileVerifier)?
    var logger: Logger { configuration.logger }
    var clock: EngineClock { configuration.clock }
    /// Where completed transfers are finished (file synced, judged, renamed, recorded) when the
    /// transport's events share one thread: `fsync`s there would stall every other transfer.
    /// Nil when completions are finished where they arrive (the mock transport, for determinism).
    let finishing: BlockingWorkPool?
    /// The limiter every transfer of the engine is under (``overallSpeedLimit``).
    let overallLimiter: BandwidthLimiter
    /// Locked sections whose record changes the observer has not taken yet: counted under the
    /// lock, so a drained transfer (no attempt left) is recorded only once this is back to zero.
    let unrecordedSections = Atomic<Int>(0)

    /// Creates an engine; nothing is downloaded until tasks are added.
    ///
    /// - Throws: ``EngineError`` when the download directory cannot be created.
    public convenience init(transport: any Transport, configuration: Configuration) throws(EngineError) {
        try self.init(transport: transport, configuration: configuration, coordinator: Coordinator())
    }

    /// Creates an engine whose steps are steps of `coordinator`: a layer that keeps state of its
    /// own beside the engine's (a queue's lists) makes it one with the engine's this way.
    package init(
        transport: any Transport, configuration: Configuration, coordinator: Coordinator
    ) throws(EngineError) {
        directory = try DownloadDirectory(path: configuration.directory)
        self.transport = transport
        self.configuration = configuration
        verifier =
            configuration.verifier
            ?? (configuration.verifiesChecksums ? configuration.digests.map { ChecksumTaskVerifier(digests: $0) } : nil)
        overallLimiter = BandwidthLimiter(configuration.overallSpeedLimit, clock: configuration.clock.now)
        finishing =
            transport.eventsShareOneThread
            ? BlockingWorkPool(maxThreads: Self.finishingThreads) : nil
        state = Coordinated(
            EngineState(
                defaultLimit: configuration.maxDownloadCount,
                pauseBySuspending: configuration.pauseDownloadBySuspendingSessionTask,
                downloadNewFileImmediately: configuration.downloadNewFileImmediately,
                hiddenFileExtension: configuration.hiddenFileExtension,
                conflictPolicy: configuration.conflictPolicy,
                tracker: ActivityTracker(window: configuration.activityWindow)), coordinator: coordinator)
    }

    /// The most threads finishing transfers at once: enough that one large file's `fsync` (which
    /// can take seconds) does not hold up the small ones behind it, and that syncs issued
    /// together share journal commits; few enough that they do not fight over the engine's lock
    /// (P2 on tmpfs, where a sync costs nothing: 16 threads ran about 25 % slower than 1–4).
    static let finishingThreads = 4

    deinit {
        state.withLock { $0.trackingTimer?.cancel() }
        broadcaster.finish()
    }

    // MARK: Options

    /// The most tasks of a list downloading at once, for lists without their own limit;
    /// ≤ 0 means no limit. Lowering it stops the surplus at the end of each list and queues
    /// them; raising it starts waiting tasks.
    public var maxDownloadCount: Int {
        get { state.withLock { $0.defaultLimit } }
        set {
            perform { state, effects in
                state.defaultLimit = newValue
                for (list, scheduling) in state.lists where scheduling.ownLimit == nil {
                    rebalance(list, &state, &effects)
                }
            }
        }
    }

    /// Whether pausing keeps the connection (`paused`) rather than stopping with a resume
    /// record (SDE's `pauseDownloadBySuspendingSessionTask`).
    public var pauseDownloadBySuspendingSessionTask: Bool {
        get { state.withLock { $0.pauseBySuspending } }
        set { state.withLock { $0.pauseBySuspending = newValue } }
    }

    /// Whether new tasks start (or queue) as soon as they are added.
    public var downloadNewFileImmediately: Bool {
        get { state.withLock { $0.downloadNewFileImmediately } }
        set { state.withLock { $0.downloadNewFileImmediately = newValue } }
    }

    /// Whether ``fileDisplayName(ofTask:)`` drops the file extension.
    public var hiddenFileExtension: Bool {
        get { state.withLock { $0.hiddenFileExtension } }
        set { state.withLock { $0.hiddenFileExtension = newValue } }
    }

    /// What happens when a finished file's name is taken.
    public var conflictPolicy: FileConflictPolicy {
        get { state.withLock { $0.conflictPolicy } }
        set { state.withLock { $0.conflictPolicy = newValue } }
    }

    /// Called when any task finishes or fails, unless the call that started it gave its own
    /// handler (SDE's `taskSuccessOrFailHandler`).
    public var taskCompletionHandler: TaskCompletionHandler? {
        get { state.withLock { $0.taskCompletionHandler } }
        set { state.withLock { $0.taskCompletionHandler = newValue } }
    }

    // MARK: Events

    /// A sequence of every event from now on, in the order the states changed. Each call
    /// returns a new sequence; it buffers without bound, so iterate it (progress events are
    /// limited to four a second per task) or let it go.
    public func events() -> AsyncStream<EngineEvent> { broadcaster.subscribe() }

    // MARK: Locked sections

    /// Runs `body` as a step of the coordinator, then what it decided, once the outermost step
    /// ends: the observers get the section's events and record changes (the section observer in
    /// the step, so in the steps' order), transfers are controlled and started, and handlers
    /// called. The engine's own event stream gets the events in the step, in order.
    ///
    /// Steps nested in a larger one (a queue's operation that calls the engine several times)
    /// make one section together: a task they all change is recorded once, as it is at the end.
    @discardableResult
    func perform<Result: Sendable>(_ body: (inout EngineState, inout Effects) -> Result) -> Result {
        let coordinator = state.coordinator
        coordinator.enter()
        if coordinator.isNested { return performNested(body) }
        let (result, effects) = state.withinStep { state -> (Result, Effects) in
            var effects = Effects()
            effects.tracksRecords = tracksRecords
            let result = body(&state, &effects)
            refill(&state, &effects)
            seal(&state, &effects)
            return (result, effects)
        }
        if coordinator.endsWithEmptyOutbox {
            coordinator.leave()
            runAndCount(effects)
        } else {
            coordinator.afterStep { [self] in runAndCount(effects) }
            coordinator.leave()
        }
        return result
    }

    /// A step nested in a larger one (entered already): its effects join the outer step's
    /// section, which is sealed at the outer step's end and runs from the outbox where the
    /// first nested step put it (after what the outer step decided before, as its own would).
    private func performNested<Result: Sendable>(_ body: (inout EngineState, inout Effects) -> Result) -> Result {
        let coordinator = state.coordinator
        let (result, opened) = state.withinStep { state -> (Result, MergedSection?) in
            var opened: MergedSection?
            let merged: MergedSection
            if let current = state.merged {
                merged = current
            } else {
                merged = MergedSection()
                merged.effects.tracksRecords = tracksRecords
                state.merged = merged
                opened = merged
            }
            let result = body(&state, &merged.effects)
            // Slots are filled at once, as in an outer step: what the next nested step reads
            // of the state is what it would be had this one been a step of its own.
            refill(&state, &merged.effects)
            return (result, opened)
        }
        if let merged = opened {
            coordinator.afterStep { [self] in
                if merged.isSealed { runAndCount(merged.effects) }
            }
            coordinator.atStepEnd { [self] in
                state.withinStep { state in
                    state.merged = nil
                    seal(&state, &merged.effects)
                }
                merged.isSealed = true
            }
        }
        coordinator.leave()
        return result
    }

    private var tracksRecords: Bool {
        configuration.recordObserver != nil || configuration.sectionObserver != nil
    }

    private func runAndCount(_ effects: Effects) {
        run(effects)
        if !effects.recordChanges.isEmpty { unrecordedSections.subtract(1, ordering: .releasing) }
    }

    /// The end of every step: fill freed slots.
    private func refill(_ state: inout EngineState, _ effects: inout Effects) {
        var guardCount = 0
        while let list = effects.refill.popFirst(), guardCount < 1_000_000 {
            guardCount += 1
            fillSlots(list, &state, &effects)
        }
    }

    /// The end of a section (a step, or the steps nested in one): the engine's stream gets its
    /// events; its record changes are collected, and the observers get what they take from it.
    private func seal(_ state: inout EngineState, _ effects: inout Effects) {
        broadcaster.yield(effects.events)
        defer { if !effects.recordChanges.isEmpty { unrecordedSections.add(1, ordering: .relaxed) } }
        let whole = configuration.sectionObserver != nil
        let records = (whole || configuration.recordObserver != nil) && !effects.dirtyKeys.isEmpty
        let events = (whole || configuration.eventObserver != nil) && !effects.events.isEmpty
        guard records || events else { return }
        // One number per section: a task appears once in a section, so its changes still
        // carry increasing numbers.
        state.nextRecordSequence += 1
        let section = state.nextRecordSequence
        effects.section = section
        if records {
            for key in effects.dirtyKeys {
                let kind: TaskRecordChange.Kind =
                    state.tasks[key].map { .upsert($0.record) } ?? .remove(urlString: key)
                effects.recordChanges.append(TaskRecordChange(sequence: section, kind: kind))
            }
        }
        guard let observer = configuration.sectionObserver else { return }
        let folders = effects.placedFolders
        let beforeRecording: (@Sendable () -> Void)? =
            effects.syncDirectory
            ? { @Sendable [directory] () -> Void in directory.synchronize(folders: folders) } : nil
        let leftovers = effects.leftoverLinks
        let whenDurable: (@Sendable () -> Void)? =
            leftovers.isEmpty ? nil : { @Sendable [weak self] () -> Void in self?.removeLeftoverLinks(leftovers) }
        effects.handOver = observer.engineDidSeal(
            events: effects.events, changes: effects.recordChanges, beforeRecording: beforeRecording,
            whenDurable: whenDurable)
    }

    private func run(_ effects: Effects) {
        var callbacks = effects.callbacks
        if let handOver = effects.handOver {
            // First, before this thread commands or launches anything that could make a later
            // section: with record changes, it returns once they are recorded.
            if let afterwards = handOver() { callbacks.append(afterwards) }
        } else if let section = effects.section, let observer = configuration.eventObserver,
            let afterwards = observer.engineDidEmit(effects.events, section: section)
        {
            callbacks.append(afterwards)
        }
        for (attempt, command, sequence) in effects.commands {
            attempt.apply(command, sequence: sequence, on: transport)
        }
        for attempt in effects.launches { launch(attempt) }
        for timer in effects.timers { clock.schedule(timer.delay, timer.work) }
        if effects.handOver == nil {
            if effects.syncDirectory { directory.synchronize(folders: effects.placedFolders) }
            let leftovers = effects.leftoverLinks
            if let observer = configuration.recordObserver, !effects.recordChanges.isEmpty {
                if leftovers.isEmpty {
                    observer.engineDidChange(effects.recordChanges)
                } else {
                    observer.engineDidChange(effects.recordChanges) { [weak self] in
                        self?.removeLeftoverLinks(leftovers)
                    }
                }
            } else if !leftovers.isEmpty {
                removeLeftoverLinks(leftovers)
            }
        }
        for callback in callbacks { callback() }
    }

    // MARK: Transitions

    /// Applies `event` to the task `key` and carries out the machine's actions: queue and slot
    /// membership, transfer control, file deletion, events.
    func transition(
        _ key: String, _ event: TaskEvent, _ state: inout EngineState, _ effects: inout Effects
    ) throws(TransitionError) {
        guard let entry = state.tasks[key] else {
            throw TransitionError(state: .notInList, wasQueued: false, event: event)
        }
        try transition(entry, event, &state, &effects)
    }

    /// The transition by URL, for a task the caller already holds (one lookup
    /// less: a step's lookups by URL are most of what it costs).
    func transition(
        _ entry: TaskEntry, _ event: TaskEvent, _ state: inout EngineState, _ effects: inout Effects
    ) throws(TransitionError) {
        let key = entry.url.string
        let before = entry.machine
        let actions = try entry.machine.apply(event)
        let after = entry.machine
        // Counters start again with the user's action, before a transfer it starts reads them.
        if case .restart = event {
            entry.retryCount = 0
            entry.mismatchCount = 0
            entry.droppedURLs = [:]
            entry.usesOneSource = false
            entry.record.verification = .unverified
            // A checksum read from a checksum file is read again: the file may have changed.
            if entry.record.checksumURL != nil { entry.record.checksum = nil }
        }
        if case .resume = event {
            entry.retryCount = 0
            entry.mismatchCount = 0
            entry.droppedURLs = [:]
            entry.usesOneSource = false
        }
        if case .deleteFile = event { entry.record.verification = .unverified }
        let listKey = entry.record.list

        // Mutated in place: a copy of the list would copy its queue on write.
        if before.holdsSlot != after.holdsSlot {
            if after.holdsSlot {
                state.lists[listKey, default: SchedulingList()].holders.insert(key)
            } else {
                state.lists[listKey, default: SchedulingList()].holders.remove(key)
                effects.refill.insert(listKey)
            }
        }
        if before.isQueued != after.isQueued {
            if after.isQueued {
                state.lists[listKey, default: SchedulingList()].enqueue(key, rank: entry.rank)
            } else {
                state.lists[listKey, default: SchedulingList()].dequeue(key, rank: entry.rank)
            }
        }

        for action in actions {
            switch action {
            case .enqueue, .dequeue, .releaseSlot:
                continue  // follows from the machine's slot and queue flags, above
            case .startTransfer:
                entry.receivedBytes = after.resumeRecord?.offset ?? 0
                startAttempt(entry, &state, &effects)
            case .suspendTransfer:
                if let attempt = entry.attempt { command(attempt, .suspend, &state, &effects) }
            case .resumeTransfer:
                if let attempt = entry.attempt, attempt.isLive {
                    command(attempt, .run, &state, &effects)
                    effects.events.append(.started(key, offset: entry.receivedBytes))
                } else {
                    // The connection is gone (shut down, or it failed while paused): a new transfer.
                    entry.receivedBytes = after.resumeRecord?.offset ?? 0
                    startAttempt(entry, &state, &effects)
                }
            case .cancelTransfer(let keepingPartialFile):
                if let attempt = entry.attempt {
                    attempt.setDisposition(keepingPartialFile ? .keepPartialFile : .discardPartialFile)
                    command(attempt, .cancel, &state, &effects)
                } else if !keepingPartialFile {
                    directory.remove(entry.record.temporaryFileName)
                }
            case .deleteTemporaryFile:
                if let attempt = entry.attempt {
                    attempt.setDisposition(.discardPartialFile)
                    command(attempt, .cancel, &state, &effects)
                } else {
                    directory.remove(entry.record.temporaryFileName)
                }
            case .deleteFinishedFile:
                if let name = entry.record.fileName { directory.remove(name) }
                // The next download names its file afresh (the server may name it differently).
                entry.record.fileName = nil
                entry.record.finishedAt = nil
            }
        }

        entry.record.state = after.state
        entry.record.resumeRecord = after.resumeRecord
        if after.state != .downloading { entry.retryAt = nil }
        if !after.holdsSlot, after.state != .finished {
            entry.receivedBytes = after.resumeRecord?.offset ?? 0
        }

        // Events, from the change.
        switch event {
        case .add: effects.events.append(.added(key))
        case .succeed:
            let path = entry.record.fileName.flatMap(directory.location(of:)) ?? directory.path
            // Progress is throttled: its last report of a finished file says 100 %.
            let length = entry.record.expectedLength ?? entry.receivedBytes
            effects.events.append(.progress(key, receivedBytes: length, expectedBytes: length))
            effects.events.append(.finished(key, file: URL(filePath: path, directoryHint: .notDirectory)))
        case .fail(let reason): effects.events.append(.failed(key, reason))
        case .deleteFile: effects.events.append(.fileDeleted(key))
        case .delete: effects.events.append(.deleted(key))
        default:
            // `started` comes from the transfer itself (see `startAttempt`), or above for a
            // suspended transfer that continues.
            if after.isWaiting, !before.isWaiting {
                effects.events.append(.waiting(key))
            } else if after.state == .paused, before.state != .paused {
                effects.events.append(.paused(key))
            } else if before.holdsSlot || before.isWaiting, after.state == .stopped || after.state == .pending,
                !after.isQueued
            {
                effects.events.append(.stopped(key))
            }
        }

        if after.state == .notInList {
            state.tasks[key] = nil
            if state.keysByNormalizedKey[entry.url.normalizedKey] == key {
                state.keysByNormalizedKey[entry.url.normalizedKey] = nil
            }
        }
        effects.markDirty(key)
        logger.trace(
            "task transition",
            metadata: [
                "url": "\(key)", "event": "\(event)",
                "from": "\(TaskStateMachine.name(of: before.state, queued: before.isQueued))",
                "to": "\(TaskStateMachine.name(of: after.state, queued: after.isQueued))",
            ])
    }

    /// Asks a transfer to run, suspend or cancel, in the order of the engine's decisions.
    func command(
        _ attempt: TransferAttempt, _ command: TransferAttempt.Command, _ state: inout EngineState,
        _ effects: inout Effects
    ) {
        effects.commands.append((attempt, command, state.commandSequence()))
    }

    /// Prepares a transfer for the task from its resume record; it is launched after the lock.
    /// Waits for a draining transfer; does nothing while the engine is shut down.
    func startAttempt(_ entry: TaskEntry, _ state: inout EngineState, _ effects: inout Effects) {
        guard !state.isShutDown else { return }
        guard entry.attempt == nil else {
            entry.startWhenDrained = true
            return
        }
        entry.retryAt = nil
        let record = entry.machine.resumeRecord
        guard let temporaryPath = directory.location(of: entry.record.temporaryFileName) else { return }
        state.nextAttempt += 1
        let context = TaskContext(
            url: entry.url, list: entry.record.list, checksum: entry.record.checksum,
            temporaryFilePath: temporaryPath, startOffset: record?.offset ?? 0, retryCount: entry.retryCount,
            previousFailure: entry.previousFailure, maxConnections: entry.record.maxConnections)
        let checksumURL =
            entry.record.checksum == nil && verifier != nil
            ? entry.record.checksumURL.flatMap { try? DownloadURL($0) } : nil
        let attempt = TransferAttempt(
            number: state.nextAttempt, url: entry.url, temporaryName: entry.record.temporaryFileName,
            temporaryPath: temporaryPath, resumeRecord: record, context: context, checksumURL: checksumURL,
            verificationRetry: entry.record.verificationRetry ?? configuration.verificationRetry,
            mismatchesBefore: entry.mismatchCount)
        // Failing over goes only to sources not dropped yet: once every one was, the task's own
        // URL is used alone, and a failure of it goes to the retry policy.
        let sources = entry.usableSources
        attempt.source = sources.first ?? entry.url
        attempt.alternatives = Array(sources.dropFirst())
        attempt.mirrors = entry.usesOneSource ? [] : attempt.alternatives
        attempt.lastCheckpointTime = clock.now()
        attempt.lastCheckpointBytes = attempt.startOffset
        attempt.limiters = bandwidthLimiters(for: entry, &state)
        entry.attempt = attempt
        entry.startWhenDrained = false
        entry.receivedBytes = attempt.startOffset
        effects.launches.append(attempt)
        effects.events.append(.started(entry.record.urlString, offset: attempt.startOffset))
    }

    // MARK: Scheduling

    /// Gives free slots of `list` to its waiting tasks, in list order.
    func fillSlots(_ listKey: DownloadListKey, _ state: inout EngineState, _ effects: inout Effects) {
        guard !state.isShutDown, !state.holdsWaiting else { return }
        while state.lists[listKey]?.hasFreeSlot(engineDefault: state.defaultLimit) == true,
            let key = state.lists[listKey]?.firstWaiting
        {
            do {
                try transition(key, .grantSlot, &state, &effects)
            } catch {
                // Cannot happen (a queued task is pending); drop it from the queue rather than loop.
                state.lists[listKey]?.dequeue(key, rank: state.tasks[key]?.rank ?? 0)
                logger.error("queued task refused its slot", metadata: ["url": "\(key)", "error": "\(error)"])
            }
        }
    }

    /// Brings `list` within its limit: revokes the slots of the last holders in list order,
    /// then fills what is free.
    func rebalance(_ listKey: DownloadListKey, _ state: inout EngineState, _ effects: inout Effects) {
        guard let surplus = state.lists[listKey]?.surplus(engineDefault: state.defaultLimit) else { return }
        if surplus > 0 {
            let victims = state.lists[listKey]!.holders.sorted {
                (state.tasks[$0]?.rank ?? 0) > (state.tasks[$1]?.rank ?? 0)
            }
            for key in victims.prefix(surplus) {
                try? transition(key, .revokeSlot, &state, &effects)
            }
        }
        effects.refill.insert(listKey)
    }

    /// The list's free-slot check for a task about to run.
    func slotAvailable(for key: String, _ state: EngineState) -> Bool {
        guard let list = state.tasks[key]?.record.list else { return false }
        return slotAvailable(in: list, state)
    }

    /// Whether `list` has a free slot now.
    func slotAvailable(in list: DownloadListKey, _ state: EngineState) -> Bool {
        guard !state.isShutDown, !state.holdsWaiting else { return false }
        return state.lists[list]?.hasFreeSlot(engineDefault: state.defaultLimit) ?? true
    }

    /// Removes temporary names still linked to placed files, now that the records saying where
    /// the files went are durable. Under the lock, and only while no transfer of the task runs:
    /// a transfer that starts afresh removes the name itself before it writes (see `launch`).
    func removeLeftoverLinks(_ links: [LeftoverLink]) {
        state.withLock { state in
            for link in links {
                state.leftoverLinks[link.temporaryName] = nil
                guard state.tasks[link.task]?.attempt == nil else { continue }
                KillPoint.reach("engine.leftover-link")
                directory.removeLeftoverLink(link.temporaryName, of: link.placedName)
            }
        }
    }

    /// Removes the temporary names still linked to files placed by finished tasks. Call it once
    /// the store has synced every record (a program about to exit, after saving its store): the
    /// records say where the files went, so the names are no longer needed to find them after a
    /// crash. Normally each name goes as soon as its own record is durable; this catches those
    /// whose callback has not come yet.
    ///
    /// While ``holdsPlacedTemporaryNames`` is set, this removes nothing.
    public func removePlacedTemporaryNames() {
        let pending = state.withLock { $0.holdsPlacedTemporaryNames ? [] : Array($0.leftoverLinks.values) }
        if !pending.isEmpty { removeLeftoverLinks(pending) }
    }

    /// Whether the temporary name of a placed file stays a hard link to it until
    /// ``releasePlacedTemporaryName(ofTask:)``, rather than going once the task's record is
    /// durable. A service of a fleet sets it: until the shared queue recorded the task finished,
    /// a service that takes the task over finds the placed file through the name its queue
    /// record carries (``placedFile(linkedFrom:candidates:)``) instead of downloading it again.
    /// On a file system without hard links a placed file keeps no second name.
    public var holdsPlacedTemporaryNames: Bool {
        get { state.withLock { $0.holdsPlacedTemporaryNames } }
        set { state.withLock { $0.holdsPlacedTemporaryNames = newValue } }
    }

    /// Removes the temporary name still linked to the file a task placed (see
    /// ``holdsPlacedTemporaryNames``); nothing when there is none.
    public func releasePlacedTemporaryName(ofTask url: String) {
        let links = state.withLock { state in state.leftoverLinks.values.filter { $0.task == url } }
        if !links.isEmpty { removeLeftoverLinks(links) }
    }

    /// The name of the placed file that the download directory's `temporary` is a second hard
    /// link to (`candidates` are tried first, then the directory is searched); nil when
    /// `temporary` is missing, has no other link here, or is no regular file.
    public func placedFile(linkedFrom temporary: String, candidates: [String]) -> String? {
        directory.placedName(ofLeftoverLink: temporary, candidates: candidates)
    }

    /// Removes the download directory's `temporary` when it is a hard link to the file `placed`
    /// (one that ``placedFile(linkedFrom:candidates:)`` found); anything else is left alone.
    public func removeTemporaryName(_ temporary: String, linkedTo placed: String) {
        directory.removeLeftoverLink(temporary, of: placed)
    }

    /// Queues the completion handler of a task that finished or failed.
    func complete(
        _ key: String, with result: Result<URL, FailureReason>, _ state: inout EngineState, _ effects: inout Effects
    ) {
        let entry = state.tasks[key]
        let handler = entry?.completion ?? state.taskCompletionHandler
        if let entry {
            entry.completion = nil
            entry.retryCount = 0
            entry.previousFailure = nil
        }
        if let handler { effects.callbacks.append { handler(key, result) } }
    }
}
