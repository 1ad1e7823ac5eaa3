import Logging
import PeregrineCurlTransport
import PeregrinePersistence
import PeregrineVerification
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A download manager: SDEDownloadManager's API for Linux — persistent, resumable downloads kept
/// as a sectioned, sortable list with a trash, thumbnails and meta info.
///
/// It composes the parts: a `DownloadEngine` (queue, states, transfers), one
/// `DownloadList` per download list (order, sections, trash), a `TaskStore` (the JSON store
/// by default) and a `Thumbnailer`. The list decides the order; the engine's queue follows it.
///
/// ## Threads
/// Every member is thread-safe (SDE's were not). Operations return at once with what changed, as
/// SDE's do, for table-view data sources. A call is atomic with respect to the list; between two
/// calls other threads (and finished downloads) may change it, so resolve index paths and act on
/// them in the same call (the `…(at:)` and `…InSection` operations do).
///
/// ## Errors
/// Bad input — an unknown URL, an index path or section out of bounds, an operation the mode
/// forbids, a meta info value that is not a property list — throws a ``DownloadManagerError`` and
/// changes nothing. A task whose state refuses an operation is left out of the result, as in SDE.
///
/// ## Identity
/// ``manager(identifier:manualMode:configuration:)`` returns the same instance for the same
/// identifier in a process; ``init(identifier:manualMode:configuration:)`` makes an unregistered
/// one (tests, or a manager whose lifetime the app controls).
public final class DownloadManager: Sendable {
    /// Called once per deleted task: its URL string, its former location, the number of tasks
    /// the call deletes, and which of them this is (from 1).
    public typealias DeleteCompletionHandler =
        @Sendable (_ urlString: String, _ location: ListIndexPath, _ count: Int, _ index: Int) -> Void

    /// The manager's identifier.
    public let identifier: String
    /// The engine under the manager, for what the facade does not wrap.
    public var engine: DownloadEngine { queue.engine }
    /// The engine on the store: the manager's persistence (restore, records, durable endings).
    let queue: PersistentQueue
    #if Thumbnails
        /// The thumbnailer (with the Thumbnails trait, on by default).
        public let thumbnailer: Thumbnailer
    #endif
    /// The store the manager writes every change to.
    public var store: any TaskStore { core.store }
    /// The tasks that came back changed because the process ended while they ran (each also got
    /// a ``DownloadManagerEvent/restoredAfterForcedQuit(_:previousState:)`` event).
    public let restoredAfterForcedQuit: [String]
    /// What loading had to repair (store repairs, stored records the engine refused, list entries
    /// without a task, tasks missing from their list), for the log. Empty when all was sound.
    public let loadRepairs: [String]

    let core: ManagerCore
    /// Serializes pushing list orders to the engine (never held with the core's lock).
    let orderLock = Mutex(())
    let lastPushedGeneration = Mutex<[DownloadListKey: UInt64]>([:])

    private static let registry = Mutex<[String: DownloadManager]>([:])

    // MARK: Creating

    /// The manager for `identifier`: the one already in memory, else a new one loaded from its
    /// store (SDE's `manager(identifier:manualMode:)`).
    ///
    /// - Parameters:
    ///   - identifier: names the manager and its store.
    ///   - manualMode: whether a manager seen for the first time starts in manual sort mode;
    ///     ignored when the store has a list.
    ///   - configuration: used only when the manager is created.
    /// - Throws: ``DownloadManagerError`` when the store cannot be read or the download
    ///   directory cannot be made.
    public static func manager(
        identifier: String, manualMode: Bool = false, configuration: Configuration = Configuration()
    ) throws(DownloadManagerError) -> DownloadManager {
        try registry.withLock { (managers) throws(DownloadManagerError) -> DownloadManager in
            if let existing = managers[identifier] { return existing }
            let manager = try DownloadManager(
                identifier: identifier, manualMode: manualMode, configuration: configuration)
            managers[identifier] = manager
            return manager
        }
    }

    /// Whether the manager's stored data may be destroyed: the store holds data and no manager
    /// with the identifier is in memory (SDE's `isDestoryableForManager`).
    public static func isDestroyableForManager(
        _ identifier: String, configuration: Configuration = Configuration()
    ) -> Bool {
        guard registry.withLock({ $0[identifier] == nil }) else { return false }
        guard let store = try? configuration.storeFactory(identifier, storeConfiguration(configuration)) else {
            return false
        }
        defer { try? store.close() }
        guard let snapshot = try? store.load() else { return false }
        return !snapshot.tasks.isEmpty || !snapshot.lists.isEmpty || !snapshot.configuration.isEmpty
    }

    /// Destroys the manager's stored data — tasks, lists, configuration, custom thumbnails, the
    /// thumbnail cache — when ``isDestroyableForManager(_:configuration:)``. Downloaded files are
    /// never deleted.
    ///
    /// - Returns: whether data was destroyed.
    @discardableResult
    public static func destroyManager(_ identifier: String, configuration: Configuration = Configuration()) -> Bool {
        guard isDestroyableForManager(identifier, configuration: configuration) else { return false }
        guard let store = try? configuration.storeFactory(identifier, storeConfiguration(configuration)),
            let snapshot = try? store.load()
        else { return false }
        defer { try? store.close() }
        var changes: [StoreChange] = snapshot.tasks.map { .removeTask(urlString: $0.urlString) }
        changes += snapshot.lists.keys.sorted().map { .removeList(identifier: $0) }
        changes += snapshot.customThumbnails.keys.sorted().map { .setCustomThumbnail(urlString: $0, nil) }
        changes.append(.setConfiguration([:]))
        do {
            try store.record(changes)
            try store.compact()
        } catch {
            return false
        }
        try? FileManager.default.removeItem(atPath: configuration.customThumbnailDirectory(for: identifier))
        #if Thumbnails
            if let disk = configuration.resolvedThumbnailDisk(for: identifier) {
                // Only the cache's own files: a configured directory may hold other things.
                ThumbnailDiskStorage(config: disk).removeAll()
            }
        #endif
        try? FileManager.default.removeItem(atPath: configuration.thumbnailCacheDirectory(for: identifier))
        return true
    }

    static func storeConfiguration(_ configuration: Configuration) -> StoreConfiguration {
        StoreConfiguration(rootDirectory: configuration.stateDirectory, flushDelay: configuration.flushDelay)
    }

    /// Makes a manager that is not registered under its identifier; see
    /// ``manager(identifier:manualMode:configuration:)``. Loads the store synchronously: the
    /// tasks come back into the engine (interrupted ones repaired) and the lists are rebuilt.
    ///
    /// - Throws: ``DownloadManagerError`` when the store cannot be opened or read, or the
    ///   download directory cannot be made.
    public init(
        identifier: String, manualMode: Bool = false, configuration: Configuration = Configuration()
    ) throws(DownloadManagerError) {
        self.identifier = identifier
        let store: any TaskStore
        let snapshot: StoreSnapshot
        do {
            store = try configuration.storeFactory(identifier, Self.storeConfiguration(configuration))
            snapshot = try store.load()
        } catch {
            throw DownloadManagerError(.storeFailed, "cannot load the store of \(identifier): \(error)")
        }

        // Options saved by an earlier run win over the configuration's initial values.
        var maxCount = configuration.maxDownloadCount
        if case .integer(let saved) = snapshot.configuration["maxDownloadCount"] { maxCount = Int(saved) }
        var trashOpened = configuration.isTrashOpened
        if case .boolean(let saved) = snapshot.configuration["isTrashOpened"] { trashOpened = saved }
        let savedLimits = ManagerCore.savedSpeedLimits(snapshot.configuration)
        var extras: [String: TaskExtras] = [:]
        for task in snapshot.tasks where task.displayName != nil || !task.metaInfo.isEmpty {
            extras[task.urlString] = TaskExtras(displayName: task.displayName, metaInfo: task.metaInfo)
        }
        var trashKeeps: Set<String> = []
        if case .array(let urls) = snapshot.configuration["trashKeepsFinishedFile"] {
            for case .string(let url) in urls { trashKeeps.insert(url) }
        }

        let core = ManagerCore(
            identifier: identifier,
            state: ManagerState(
                extras: extras, trashKeepsFinishedFile: trashKeeps, isTrashOpened: trashOpened,
                maxDownloadCount: maxCount, overallSpeedLimit: savedLimits.overall,
                listSpeedLimits: savedLimits.lists),
            store: store, classifier: configuration.classifier, logger: configuration.logger,
            listClock: configuration.listClock, calendar: configuration.calendar)
        self.core = core

        #if Thumbnails
            var thumbnailConfiguration = configuration.thumbnails
            thumbnailConfiguration.customThumbnailDirectory =
                thumbnailConfiguration.customThumbnailDirectory
                ?? configuration.customThumbnailDirectory(for: identifier)
            thumbnailConfiguration.disk = configuration.resolvedThumbnailDisk(for: identifier)
            let relay = CustomThumbnailRelay(core: core, initial: snapshot.customThumbnails)
            thumbnailConfiguration.customThumbnailIndexDidChange = { relay.indexDidChange($0) }
            thumbnailer = Thumbnailer(configuration: thumbnailConfiguration)
        #endif

        var engineConfiguration = DownloadEngine.Configuration(
            directory: configuration.resolvedDownloadDirectory(for: identifier), maxDownloadCount: maxCount,
            pauseDownloadBySuspendingSessionTask: configuration.pauseDownloadBySuspendingSessionTask,
            downloadNewFileImmediately: configuration.downloadNewFileImmediately,
            hiddenFileExtension: configuration.hiddenFileExtension, conflictPolicy: configuration.conflictPolicy,
            checkpoint: configuration.checkpoint, clock: configuration.clock,
            requestAdapter: configuration.requestAdapter, retryPolicy: configuration.retryPolicy,
            verifier: configuration.verifier, digests: OpenSSLDigests(),
            fileKindClassifier: configuration.classifier.classify, logger: configuration.logger,
            verifiesChecksums: configuration.verifiesChecksums, verificationRetry: configuration.verificationRetry,
            segmentation: configuration.segmentation,
            overallSpeedLimit: savedLimits.overall ?? configuration.overallSpeedLimit)
        engineConfiguration.preallocatesFiles = configuration.preallocatesFiles
        // Tasks back into the engine (the crash repair is the engine's), every change recorded.
        do {
            queue = try PersistentQueue(
                transport: configuration.transport ?? CurlTransport(), configuration: engineConfiguration,
                store: store, snapshot: snapshot, delegate: core, killPoint: "manager.durable")
        } catch {
            guard case .engine(let error) = error else { throw DownloadManagerError(.storeFailed, "\(error)") }
            throw DownloadManagerError(.directoryUnavailable, "\(error)")
        }
        let engine = queue.engine
        let result = queue.restoreResult
        restoredAfterForcedQuit = result.recovered
        var repairs = queue.loadRepairs
        var restoredSet = Set(result.restored)

        // Lists rebuilt from their saved state, never dropping a task.
        var lists: [DownloadListKey: DownloadList] = [:]
        var records: [String: DownloadTaskRecord] = [:]
        for url in result.restored { records[url] = engine.task(url)?.record }
        var extrasNow = core.state.withLock { $0.extras }
        for (url, _) in extrasNow where records[url] == nil { extrasNow[url] = nil }
        for (name, stored) in snapshot.lists {
            let key = DownloadListKey(name)
            let (list, listRepairs) = Self.rebuild(
                stored, records: records, extras: extrasNow, core: core, owned: &restoredSet, key: key)
            lists[key] = list
            repairs += listRepairs
        }
        if lists[.default] == nil { lists[.default] = core.newList(manual: manualMode) }
        // Tasks in no list (a crash between adding a task and saving its list) join their list.
        let orphans = result.restored.filter { restoredSet.contains($0) }
        for url in orphans {
            guard let record = records[url] else { continue }
            if lists[record.list] == nil { lists[record.list] = core.newList() }
            let item = core.listItem(record, extrasNow[url] ?? TaskExtras())
            Self.append(item, to: &lists[record.list]!)
            repairs.append("task \(url) was in no list; added to \(record.list)")
        }
        let loadedLists = lists
        let finalExtras = extrasNow
        core.state.withLock { state in
            state.lists = loadedLists
            state.extras = finalExtras
            // Restored tasks are listed now, with the records read after restoring.
            state.unlisted = [:]
        }
        if !repairs.isEmpty || snapshot.lists.isEmpty {
            let changes = core.state.withLock { state -> [StoreChange] in
                var changes = state.lists.sorted(by: { $0.key < $1.key }).map {
                    StoreChange.putList(core.storedList($0.key, $0.value, state))
                }
                changes.append(.setConfiguration(core.storedConfiguration(state)))
                return changes
            }
            core.record(changes)
        }
        loadRepairs = repairs
        for repair in repairs { configuration.logger.warning("load repair", metadata: ["repair": "\(repair)"]) }

        #if Thumbnails
            var index = CustomThumbnailIndex()
            for (url, stored) in snapshot.customThumbnails {
                guard let pixelFormat = ThumbnailPixelFormat(rawValue: stored.pixelFormat),
                    let format = ImageFormat(rawValue: stored.format)
                else { continue }
                index.entries[url] = CustomThumbnailIndex.Entry(
                    fileName: stored.fileName, width: stored.width, height: stored.height, pixelFormat: pixelFormat,
                    format: format, contentIdentifier: stored.contentIdentifier)
            }
            thumbnailer.restoreCustomThumbnails(index)
        #endif

        for (name, stored) in snapshot.lists {
            guard let limit = stored.maxDownloadCount else { continue }
            engine.setMaxDownloadCount(limit, in: DownloadListKey(name))
            core.state.withLock { $0.listLimits[DownloadListKey(name)] = limit }
        }
        for (key, limit) in savedLimits.lists { engine.setSpeedLimit(limit, forList: key) }
        for key in loadedLists.keys { pushOrder(key) }
    }

    /// A saved list restricted to the restored tasks; tasks it holds are removed from `owned`.
    private static func rebuild(
        _ stored: StoredList, records: [String: DownloadTaskRecord], extras: [String: TaskExtras],
        core: ManagerCore, owned: inout Set<String>, key: DownloadListKey
    ) -> (DownloadList, [String]) {
        var repairs: [String] = []
        var seen: Set<String> = []
        func keep(_ url: String) -> Bool {
            guard records[url] != nil, owned.contains(url), !seen.contains(url) else {
                repairs.append("list entry \(url) of \(key) has no task; dropped")
                return false
            }
            seen.insert(url)
            return true
        }
        let sortType = ListSortType(rawValue: stored.sortType) ?? .addTime
        var sections: [[String]] = []
        var titles: [String] = []
        for (urls, title) in zip(stored.sections, stored.sectionTitles) {
            let kept = urls.filter(keep)
            if kept.isEmpty, sortType != .manual { continue }
            sections.append(kept)
            titles.append(title)
        }
        let trash = stored.trash.filter(keep)
        let state = DownloadListState(
            sections: sections, sectionTitles: titles, toDeleteList: trash, sortType: sortType,
            sortOrder: ListSortOrder(rawValue: stored.sortOrder) ?? .ascending,
            sectioning: ListSectioning(rawValue: stored.sectioning), addTimeReference: stored.addTimeReference)
        let items = seen.map { core.listItem(records[$0]!, extras[$0] ?? TaskExtras()) }
        owned.subtract(seen)
        do {
            let list = try DownloadList(restoring: state, items: items, clock: core.listClock, calendar: core.calendar)
            return (list, repairs)
        } catch {
            // The saved layout is unusable: keep every task, in a list sorted the saved way.
            repairs.append("list \(key) could not be restored (\(error)); rebuilt")
            var list = DownloadList(
                sortType: sortType == .manual ? .addTime : sortType, sortOrder: state.sortOrder,
                sectioning: state.sectioning, clock: core.listClock, calendar: core.calendar)
            _ = try? list.add(items)
            if sortType == .manual { list.sortListBy(type: .manual) }
            return (list, repairs)
        }
    }

    /// Adds an item to a list in either mode: sorted in a predefined mode, at the end of the last
    /// section in manual mode (a placeholder section when there is none).
    static func append(_ item: ListItem, to list: inout DownloadList) {
        append([item], to: &list)
    }

    @discardableResult
    static func append(_ items: [ListItem], to list: inout DownloadList) -> ListChange {
        guard !items.isEmpty else { return ListChange() }
        if list.sortType != .manual { return (try? list.add(items)) ?? ListChange() }
        if list.sectionCount == 0 {
            return (try? list.insert(items, atSection: 0, title: DownloadList.placeholderTitle)) ?? ListChange()
        }
        let last = list.sectionCount - 1
        let location = ListIndexPath(section: last, item: list.taskCountInSection(last) ?? 0)
        return (try? list.insert(items, at: location)) ?? ListChange()
    }

    // MARK: Group commit

    /// Runs `body` with the changes it makes through this manager synced together: each
    /// operation inside returns without waiting for its own sync, and this returns once all of
    /// them are on disk. Adding 500 downloads one by one inside costs about one sync, not
    /// one per store write (three for an added task: its record, its list, its meta info).
    ///
    /// Use it where nothing done inside is reported as done before it returns — a request that
    /// answers once at the end, like the service's `system.multicall` of `aria2.addUri`. Until
    /// then the changes show in the manager as usual, and a crash may lose them. Endings
    /// (finished, failed) are still announced only once synced. Only the calling task's
    /// operations take part (it is a task-local value); other threads sync as always.
    public func withGroupCommit<Result: Sendable>(_ body: () async -> Result) async -> Result {
        await SyncBatch.run(body)
    }

    // MARK: Order

    /// Pushes a list's order to the engine, whose queue follows it.
    func pushOrder(_ key: DownloadListKey) {
        orderLock.withLock { _ in
            let (order, generation) = core.state.withLock { state in
                (state.lists[key].map { $0.downloadList.flatMap { $0 } + $0.toDeleteList } ?? [], state.listGeneration)
            }
            let stale = lastPushedGeneration.withLock { pushed in
                if let last = pushed[key], last == generation { return true }
                pushed[key] = generation
                return false
            }
            if !stale { engine.setListOrder(order, in: key) }
        }
    }

    // MARK: Options

    /// The most tasks of a list downloading at once; ≤ 0 is unlimited. Lowering it stops the
    /// surplus at the end of the list and queues them; raising it starts them again. Saved.
    public var maxDownloadCount: Int {
        get { engine.maxDownloadCount }
        set {
            core.gate.enter()
            defer { core.gate.leave() }
            engine.maxDownloadCount = newValue
            let changes = core.state.withLock { state in
                state.maxDownloadCount = newValue
                return [StoreChange.setConfiguration(core.storedConfiguration(state))]
            }
            core.record(changes)
        }
    }

    /// Whether pausing keeps the connection (`paused`) rather than stopping with a resume record.
    public var pauseDownloadBySuspendingSessionTask: Bool {
        get { engine.pauseDownloadBySuspendingSessionTask }
        set { engine.pauseDownloadBySuspendingSessionTask = newValue }
    }

    /// Whether new tasks start (or queue) as soon as they are added.
    public var downloadNewFileImmediately: Bool {
        get { engine.downloadNewFileImmediately }
        set { engine.downloadNewFileImmediately = newValue }
    }

    /// Whether display names drop the file extension.
    public var hiddenFileExtension: Bool {
        get { engine.hiddenFileExtension }
        set { engine.hiddenFileExtension = newValue }
    }

    /// Whether deleting moves tasks to the trash (``toDeleteList``) first. Saved.
    public var isTrashOpened: Bool {
        get { core.state.withLock { $0.isTrashOpened } }
        set {
            core.gate.enter()
            defer { core.gate.leave() }
            let changes = core.state.withLock { state in
                state.isTrashOpened = newValue
                return [StoreChange.setConfiguration(core.storedConfiguration(state))]
            }
            core.record(changes)
        }
    }

    /// The download directory.
    public var downloadDirectory: String { engine.directory.path }

    /// Whether the stored data is loaded (SDE's `isDataLoaded`): always true, because a manager
    /// loads its store before it is returned.
    public var isDataLoaded: Bool { true }

    /// Whether activity tracking is on.
    public var isTrackingDownloadActivity: Bool { engine.isTrackingDownloadActivity }

    /// The last error the store reported while recording a change, if any.
    public var lastStoreError: StoreError? { core.lastStoreError.withLock { $0 } }

    // MARK: Handlers and events

    /// Called when any task finishes (with its file's URL) or fails, unless the call that started
    /// it gave its own `successOrFailHandler` (SDE's `taskSuccessOrFailHandler`).
    public var taskSuccessOrFailHandler: TaskCompletionHandler? {
        get { engine.taskCompletionHandler }
        set { engine.taskCompletionHandler = core.deferred(newValue) }
    }

    /// Called once a second while tracking with every task's activity and the totals (SDE's
    /// `downloadActivityHandler`).
    public var downloadActivityHandler: (@Sendable (ActivityReport) -> Void)? {
        get { engine.downloadActivityHandler }
        set { engine.downloadActivityHandler = newValue }
    }

    /// Called when tracking finds no download left (SDE's `downloadCompletionHandler`).
    public var downloadCompletionHandler: (@Sendable () -> Void)? {
        get { engine.downloadCompletionHandler }
        set { engine.downloadCompletionHandler = newValue }
    }

    /// Called once per task deleted by the next deleting call, then reset to nil, as in SDE.
    public var deleteCompletionHandler: DeleteCompletionHandler? {
        get { core.state.withLock { $0.deleteCompletionHandler } }
        set { core.state.withLock { $0.deleteCompletionHandler = newValue } }
    }

    /// Starts calling ``downloadActivityHandler`` once a second.
    public func beginTrackingDownloadActivity() { engine.beginTrackingDownloadActivity() }

    /// Stops calling ``downloadActivityHandler``.
    public func stopTrackingDownloadActivity() { engine.stopTrackingDownloadActivity() }

    /// Every event from now on — task events and list changes — in the order they happened. Each
    /// call returns a new sequence that buffers without bound: iterate it or let it go.
    ///
    /// The sequence is iterated on whatever executor the awaiting task runs on, independently of
    /// the threads that run handle closures (``DownloadTaskHandle``): the two see the same events
    /// in the same order each, but output printed from both may interleave.
    public func events() -> AsyncStream<DownloadManagerEvent> { core.broadcaster.subscribe() }

    // MARK: Saving

    /// Writes and syncs every recorded change now (SDE's `saveData()`; every change is already
    /// recorded as it happens, and durable ones are synced at once).
    public func saveData() throws(DownloadManagerError) {
        do {
            // Every record synced: placed files need their temporary names no more.
            try queue.save()
        } catch {
            throw DownloadManagerError(.storeFailed, error.description)
        }
    }
}

#if Thumbnails
    /// Saves the thumbnailer's custom-thumbnail index through the store, as changes per task.
    final class CustomThumbnailRelay: Sendable {
        private let core: ManagerCore
        private let previous: Mutex<[String: StoredCustomThumbnail]>

        init(core: ManagerCore, initial: [String: StoredCustomThumbnail]) {
            self.core = core
            previous = Mutex(initial)
        }

        func indexDidChange(_ index: CustomThumbnailIndex) {
            var current: [String: StoredCustomThumbnail] = [:]
            for (url, entry) in index.entries {
                current[url] = StoredCustomThumbnail(
                    fileName: entry.fileName, width: entry.width, height: entry.height,
                    pixelFormat: entry.pixelFormat.rawValue, format: entry.format.rawValue,
                    contentIdentifier: entry.contentIdentifier)
            }
            let changes = previous.withLock { previous -> [StoreChange] in
                var changes: [StoreChange] = []
                for (url, stored) in current.sorted(by: { $0.key < $1.key }) where previous[url] != stored {
                    changes.append(.setCustomThumbnail(urlString: url, stored))
                }
                for url in previous.keys.sorted() where current[url] == nil {
                    changes.append(.setCustomThumbnail(urlString: url, nil))
                }
                previous = current
                return changes
            }
            core.record(changes)
        }
    }
#endif
