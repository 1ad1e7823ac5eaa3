import PeregrineChecksums
import PeregrineCore

extension DownloadEngine {
    // MARK: Adding

    /// Adds downloads; with ``downloadNewFileImmediately`` each starts, or waits when its list
    /// is at its limit.
    ///
    /// Invalid URLs (`URLValidationError`) and duplicates — the same
    /// `DownloadURL.normalizedKey` as a task of the engine or an earlier URL of this call — are
    /// reported and change nothing.
    ///
    /// - Parameters:
    ///   - urlStrings: the URLs; each string becomes a task's key as given.
    ///   - list: the download list the tasks join.
    ///   - completion: called once per new task when it finishes or fails, instead of
    ///     ``taskCompletionHandler``.
    @discardableResult
    public func download(
        _ urlStrings: [String], in list: DownloadListKey = .default, completion: TaskCompletionHandler? = nil
    ) -> DownloadAddition {
        download(urlStrings.map { DownloadItem($0) }, in: list, completion: completion)
    }

    /// Adds downloads with a preferred file name or a checksum each; see ``download(_:in:completion:)-([String],_,_)``.
    ///
    /// A checksum the verifier cannot use (an unknown algorithm, hex of the wrong length or
    /// with a typo, an empty one) or a checksum URL that is no http(s) URL refuses the item
    /// (``DownloadAddition/invalidChecksums``) before anything changes. A custom
    /// ``TaskFileVerifier`` decides what it accepts; with none, checksums are not checked.
    @discardableResult
    public func download(
        _ items: [DownloadItem], in list: DownloadListKey = .default, completion: TaskCompletionHandler? = nil
    ) -> DownloadAddition {
        var parsed: [(DownloadItem, Result<DownloadURL, URLValidationError>)] = []
        parsed.reserveCapacity(items.count)
        var invalidChecksums: [String: VerificationError] = [:]
        var mirrors: [String: [String]] = [:]
        for item in items {
            do throws(URLValidationError) {
                let url = try DownloadURL(item.urlString)
                if !item.mirrors.isEmpty { mirrors[item.urlString] = try Self.mirrors(item.mirrors, of: url) }
                parsed.append((item, .success(url)))
            } catch {
                parsed.append((item, .failure(error)))
            }
            if let error = checksumError(of: item) { invalidChecksums[item.urlString] = error }
        }
        let now = clock.date()
        return perform { state, effects in
            state.tasks.reserveCapacity(state.tasks.count + parsed.count)
            var result = DownloadAddition()
            for (item, parse) in parsed {
                let url: DownloadURL
                switch parse {
                case .failure(let error):
                    result.invalid.append(.init(urlString: item.urlString, error: error))
                    continue
                case .success(let value):
                    url = value
                }
                if !invalidChecksums.isEmpty, let error = invalidChecksums[item.urlString] {
                    result.invalidChecksums.append(
                        .init(
                            urlString: item.urlString, checksum: item.checksum ?? item.checksumURL ?? "", error: error))
                    continue
                }
                var subdirectory: String?
                if let wanted = item.subdirectory {
                    guard let normalized = DownloadDirectory.normalizedSubdirectory(wanted) else {
                        result.invalidSubdirectories.append(.init(urlString: item.urlString, subdirectory: wanted))
                        continue
                    }
                    subdirectory = normalized.isEmpty ? nil : normalized
                }
                if let existing = state.keysByNormalizedKey[url.normalizedKey]
                    ?? state.tasks[url.string]?.record.urlString
                {
                    result.duplicates.append(.init(urlString: item.urlString, existingURLString: existing))
                    continue
                }
                let record = DownloadTaskRecord(
                    urlString: url.string, list: list, state: .notInList,
                    temporaryFileName: state.temporaryName(),
                    preferredFileName: item.preferredFileName, checksum: item.checksum, addedAt: now,
                    checksumURL: item.checksum == nil ? item.checksumURL : nil,
                    verificationRetry: item.verificationRetry,
                    maxConnections: item.maxConnections.map {
                        min(max($0, Segmentation.connectionRange.lowerBound), Segmentation.connectionRange.upperBound)
                    }, speedLimit: item.speedLimit, mirrors: mirrors.isEmpty ? [] : mirrors[item.urlString] ?? [],
                    subdirectory: subdirectory)
                let entry = insert(url: url, record: record, machine: TaskStateMachine(), &state)
                entry.completion = completion
                try? transition(entry, .add, &state, &effects)
                if item.startsImmediately ?? state.downloadNewFileImmediately {
                    try? transition(entry, .resume(slotAvailable: slotAvailable(in: list, state)), &state, &effects)
                }
                result.added.append(url.string)
            }
            return result
        }
    }

    /// Mirrors of `url`, checked, without duplicates of it or of each other.
    ///
    /// - Throws: the first mirror's error that is no URL Peregrine can download.
    static func mirrors(_ strings: [String], of url: DownloadURL) throws(URLValidationError) -> [String] {
        var seen: Set<String> = [url.normalizedKey]
        var mirrors: [String] = []
        for string in strings {
            let mirror = try DownloadURL(string)
            if seen.insert(mirror.normalizedKey).inserted { mirrors.append(mirror.string) }
        }
        return mirrors
    }

    /// Why an item's checksum (or checksum URL) cannot be used, if it cannot.
    private func checksumError(of item: DownloadItem) -> VerificationError? {
        if verifier == nil, configuration.verifiesChecksums, item.checksum != nil || item.checksumURL != nil {
            return VerificationError(
                .unsupportedAlgorithm,
                "this engine cannot check checksums: give its configuration `digests` (OpenSSLDigests() from "
                    + "PeregrineVerification) or a verifier, or turn verifiesChecksums off to keep them unchecked")
        }
        if let specification = item.checksum {
            do throws(VerificationError) {
                try verifier?.validate(checksum: specification)
            } catch {
                return error
            }
            return nil
        }
        guard let checksumURL = item.checksumURL else { return nil }
        do throws(URLValidationError) {
            _ = try DownloadURL(checksumURL)
            return nil
        } catch {
            return VerificationError(.checksumFileUnavailable, "the checksum URL cannot be used: \(error)")
        }
    }

    /// Puts a new entry at the end of its list.
    @discardableResult
    func insert(
        url: DownloadURL, record: DownloadTaskRecord, machine: TaskStateMachine, _ state: inout EngineState
    ) -> TaskEntry {
        state.nextRank += 1
        let entry = TaskEntry(
            url: url, record: record, machine: machine, rank: state.nextRank,
            receivedBytes: machine.resumeRecord?.offset ?? 0)
        state.tasks[url.string] = entry
        state.keysByNormalizedKey[url.normalizedKey] = url.string
        if state.lists[record.list] == nil { state.lists[record.list] = SchedulingList() }
        return entry
    }

    // MARK: Operations by URL

    /// Resumes tasks that are pending, paused, stopped or failed: each starts when its list has
    /// a free slot and waits in the queue otherwise (reported as changed, with a
    /// ``EngineEvent/waiting(_:)`` event). A paused task continues on its connection.
    ///
    /// - Parameter urlStrings: the tasks, by URL string.
    /// - Parameter completion: replaces ``taskCompletionHandler`` for these tasks.
    @discardableResult
    public func resumeTasks(_ urlStrings: [String], completion: TaskCompletionHandler? = nil) -> TaskOperationResult {
        operate(on: urlStrings) { key, state, effects throws(TransitionError) in
            try transition(key, .resume(slotAvailable: slotAvailable(for: key, state)), &state, &effects)
            if let completion { state.tasks[key]?.completion = completion }
        }
    }

    /// Pauses downloading tasks: with ``pauseDownloadBySuspendingSessionTask`` they keep their
    /// connection and slot (`paused`), else they stop with a resume record. A waiting task
    /// leaves the queue.
    @discardableResult
    public func pauseTasks(_ urlStrings: [String]) -> TaskOperationResult {
        operate(on: urlStrings) { key, state, effects throws(TransitionError) in
            try transition(key, .pause(keepingConnection: state.pauseBySuspending), &state, &effects)
        }
    }

    /// Stops downloading and paused tasks (closing the connection, keeping a resume record when
    /// the server allows one: `stopped`, else `pending` with progress 0) and takes waiting
    /// tasks out of the queue.
    @discardableResult
    public func stopTasks(_ urlStrings: [String]) -> TaskOperationResult {
        operate(on: urlStrings) { key, state, effects throws(TransitionError) in
            try transition(key, .stop, &state, &effects)
        }
    }

    /// Downloads finished, stopped or failed tasks again from the first byte: the finished
    /// file or the partial file and its resume record are deleted first.
    @discardableResult
    public func restartTasks(_ urlStrings: [String], completion: TaskCompletionHandler? = nil) -> TaskOperationResult {
        operate(on: urlStrings) { key, state, effects throws(TransitionError) in
            try transition(key, .restart(slotAvailable: slotAvailable(for: key, state)), &state, &effects)
            if let completion { state.tasks[key]?.completion = completion }
        }
    }

    /// Deletes tasks: their transfers end, their temporary files go, and so do their finished
    /// files unless `keepFinishedFile`.
    @discardableResult
    public func deleteTasks(_ urlStrings: [String], keepFinishedFile: Bool = false) -> TaskOperationResult {
        operate(on: urlStrings) { key, state, effects throws(TransitionError) in
            try transition(key, .delete(keepingFinishedFile: keepFinishedFile), &state, &effects)
        }
    }

    /// Deletes the files of tasks (finished or partial) and keeps the tasks, `pending` with
    /// progress 0. A pending task counts as changed, as in SDE.
    @discardableResult
    public func deleteFilesOfTasks(_ urlStrings: [String]) -> TaskOperationResult {
        operate(on: urlStrings) { key, state, effects throws(TransitionError) in
            try transition(key, .deleteFile, &state, &effects)
        }
    }

    /// Runs `body` for each known task, collecting what changed and what was refused.
    func operate(
        on urlStrings: [String],
        _ body: (String, inout EngineState, inout Effects) throws(TransitionError) -> Void
    ) -> TaskOperationResult {
        perform { state, effects in
            var result = TaskOperationResult()
            for key in urlStrings {
                guard state.tasks[key] != nil else {
                    result.rejected.append(TaskOperationError(.unknownTask, urlString: key))
                    continue
                }
                do throws(TransitionError) {
                    try body(key, &state, &effects)
                    result.changed.append(key)
                } catch {
                    result.rejected.append(TaskOperationError(.illegalTransition, urlString: key, transition: error))
                }
            }
            return result
        }
    }

    // MARK: Operations on all tasks

    /// Resumes every unfinished task (pending, paused, stopped, failed), in list order; those
    /// beyond their list's limit wait. With `underLimit` false the limits are lifted first
    /// (set to unlimited), as SDE's `resumeAllTasks(underLimit: false)` does.
    ///
    /// - Parameter underLimit: whether the lists' limits stay in force; false lifts them first.
    /// - Parameter list: one list, or every list when nil.
    @discardableResult
    public func resumeAllTasks(underLimit: Bool = true, in list: DownloadListKey? = nil) -> [String] {
        perform { state, effects in
            if !underLimit {
                if let list {
                    state.lists[list, default: SchedulingList()].ownLimit = 0
                } else {
                    state.defaultLimit = 0
                    for key in state.lists.keys { state.lists[key]?.ownLimit = nil }
                }
            }
            var changed: [String] = []
            for key in state.keys(in: list) {
                guard let machine = state.tasks[key]?.machine else { continue }
                switch machine.state {
                case .pending where !machine.isQueued, .paused, .stopped, .failed:
                    if (try? transition(key, .resume(slotAvailable: slotAvailable(for: key, state)), &state, &effects))
                        != nil
                    {
                        changed.append(key)
                    }
                default:
                    continue
                }
            }
            return changed
        }
    }

    /// Pauses every downloading task and takes waiting ones out of the queue; stops them all
    /// instead when ``pauseDownloadBySuspendingSessionTask`` is off, as SDE does.
    @discardableResult
    public func pauseAllTasks(in list: DownloadListKey? = nil) -> [String] {
        perform { state, effects in
            let suspending = state.pauseBySuspending
            var changed: [String] = []
            for key in state.keys(in: list) {
                guard let machine = state.tasks[key]?.machine else { continue }
                let event: TaskEvent
                if machine.state == .downloading || machine.isWaiting {
                    event = .pause(keepingConnection: suspending)
                } else if machine.state == .paused, !suspending {
                    event = .stop
                } else {
                    continue
                }
                if (try? transition(key, event, &state, &effects)) != nil { changed.append(key) }
            }
            return changed
        }
    }

    /// Stops every downloading and paused task and empties the queues.
    @discardableResult
    public func stopAllTasks(in list: DownloadListKey? = nil) -> [String] {
        perform { state, effects in
            var changed: [String] = []
            for key in state.keys(in: list) {
                guard let machine = state.tasks[key]?.machine, machine.holdsSlot || machine.isWaiting else { continue }
                if (try? transition(key, .stop, &state, &effects)) != nil { changed.append(key) }
            }
            return changed
        }
    }

    /// Deletes every task (of a list); finished files stay with `keepFinishedFile`.
    @discardableResult
    public func deleteAllTasks(keepFinishedFile: Bool = false, in list: DownloadListKey? = nil) -> [String] {
        perform { state, effects in
            var changed: [String] = []
            for key in state.keys(in: list)
            where (try? transition(key, .delete(keepingFinishedFile: keepFinishedFile), &state, &effects)) != nil {
                changed.append(key)
            }
            return changed
        }
    }

    /// Deletes the files of every task (of a list), keeping the tasks.
    @discardableResult
    public func deleteFilesOfAllTasks(in list: DownloadListKey? = nil) -> [String] {
        perform { state, effects in
            var changed: [String] = []
            for key in state.keys(in: list) where (try? transition(key, .deleteFile, &state, &effects)) != nil {
                changed.append(key)
            }
            return changed
        }
    }

    // MARK: Lists and limits

    /// The limit of one list: its own, or ``maxDownloadCount``.
    public func maxDownloadCount(in list: DownloadListKey) -> Int {
        state.withLock { state in state.lists[list]?.limit(engineDefault: state.defaultLimit) ?? state.defaultLimit }
    }

    /// Gives a list its own limit (≤ 0: unlimited), or makes it follow ``maxDownloadCount``
    /// again with nil. Lowering it stops the surplus at the end of the list and queues them;
    /// raising it starts waiting tasks.
    public func setMaxDownloadCount(_ limit: Int?, in list: DownloadListKey) {
        perform { state, effects in
            state.lists[list, default: SchedulingList()].ownLimit = limit
            rebalance(list, &state, &effects)
        }
    }

    /// The lists that hold tasks (or have their own limit), sorted by name.
    public var lists: [DownloadListKey] { state.withLock { $0.lists.keys.sorted() } }

    /// Sets the order of a list's tasks — the order the waiting queue follows and the one whose
    /// end loses slots when the limit goes down. The list model calls this after every sort or
    /// move; tasks not named keep their relative order after the named ones.
    ///
    /// The order is pushed rather than asked for, so the engine never calls out to the list
    /// model under its lock (which could deadlock against a model calling the engine).
    public func setListOrder(_ urlStrings: [String], in list: DownloadListKey? = nil) {
        perform { state, _ in
            var position: [String: Int64] = [:]
            for (index, key) in urlStrings.enumerated() where position[key] == nil { position[key] = Int64(index) }
            let keys = state.keys(in: list)
            let named = Int64(urlStrings.count)
            var following = named
            for key in keys {
                if let index = position[key], state.tasks[key] != nil {
                    state.tasks[key]!.rank = index
                } else {
                    state.tasks[key]!.rank = following
                    following += 1
                }
            }
            state.nextRank = max(state.nextRank, following)
            let ranks = state.tasks.mapValues(\.rank)
            for listKey in state.lists.keys where list == nil || listKey == list {
                state.lists[listKey]!.reorderWaiting { ranks[$0] ?? .max }
            }
        }
    }

    // MARK: Shutting down

    /// Ends every transfer without changing any state (Reed's `shutDown`, for a logout or a
    /// lost network): running tasks stay `downloading` and their resume records move to the
    /// synced offsets; nothing starts until ``startUp()``.
    public func shutDown() {
        perform { state, effects in
            state.isShutDown = true
            for (_, entry) in state.tasks {
                guard let attempt = entry.attempt else { continue }
                attempt.setDisposition(.keepPartialFile)
                command(attempt, .cancel, &state, &effects)
            }
        }
        stopTrackingDownloadActivity()
    }

    /// Starts again after ``shutDown()``: `downloading` tasks continue from their resume
    /// records, free slots go to waiting tasks. `paused` tasks stay paused until resumed.
    public func startUp() {
        perform { state, effects in
            state.isShutDown = false
            for key in state.keys(in: nil) where state.tasks[key]?.machine.state == .downloading {
                let entry = state.tasks[key]!
                if entry.attempt == nil || entry.attempt?.isLive == false {
                    entry.receivedBytes = entry.machine.resumeRecord?.offset ?? 0
                    startAttempt(entry, &state, &effects)
                }
            }
            for list in state.lists.keys { effects.refill.insert(list) }
        }
    }

    /// Whether ``shutDown()`` was called without ``startUp()`` since.
    public var isShutDown: Bool { state.withLock { $0.isShutDown } }

    /// Whether waiting tasks are held, as a service's drain before it stops holds them: the
    /// transfers that run go on to their end, but no waiting task gets a free slot, and a task
    /// resumed meanwhile waits. Set back to `false`, the free slots go to the waiting tasks.
    public var holdsWaitingTasks: Bool {
        get { state.withLock { $0.holdsWaiting } }
        set {
            perform { state, effects in
                state.holdsWaiting = newValue
                if !newValue { effects.refill.formUnion(state.lists.keys) }
            }
        }
    }

    /// How many tasks are downloading now, in every list (a drain waits for none).
    public var downloadingTaskCount: Int {
        state.withLock { state in
            state.lists.values.reduce(0) { count, list in
                count + list.holders.count { state.tasks[$0]?.machine.state == .downloading }
            }
        }
    }
}
