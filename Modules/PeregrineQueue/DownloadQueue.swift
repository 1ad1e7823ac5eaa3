import Logging
import PeregrinePersistence
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A persistent download queue kept as sorted, sectioned lists with a trash: SDEDownloadManager's
/// API over any `Transport` and any `TaskStore`, without thumbnails or default backends.
///
/// It composes the parts: a `PersistentQueue` (the `DownloadEngine` on the store: queue, states,
/// transfers, crash repair, endings announced once durable) and one `DownloadList` per download
/// list (order, sections, trash), with each task's display name and meta info. The list decides
/// the order; the engine's queue follows it. `Peregrine`'s `DownloadManager` is this queue with
/// libcurl, the JSON store and OpenSSL by default, thumbnails, and managers named by identifier;
/// use the queue itself to pick other parts and link only those (Examples/PickAndMix).
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
/// ## Facades
/// A facade holds a queue rather than being one: its members are ``DownloadQueueing``'s, which
/// the queue and a facade that holds one (the manager, which adds thumbnails) share, written once
/// on ``downloadQueue``.
public final class DownloadQueue: DownloadQueueing {
    /// Called once per deleted task: its URL string, its former location, the number of tasks
    /// the call deletes, and which of them this is (from 1).
    public typealias DeleteCompletionHandler =
        @Sendable (_ urlString: String, _ location: ListIndexPath, _ count: Int, _ index: Int) -> Void

    /// What the queue adds to the engine's configuration.
    public struct Options: Sendable {
        /// Whether the default list starts in manual sort mode when the store has no list.
        public var manualMode: Bool
        /// The initial trash switch; the store's saved one wins.
        public var isTrashOpened: Bool
        /// How a file's kind (the list's sections and the type icons) is told. It replaces the
        /// engine configuration's `fileKindClassifier`, so that list and engine agree.
        public var classifier: FileTypeClassifier
        /// The clock the list's add-time sections are computed from.
        public var listClock: @Sendable () -> Date
        /// The calendar the list's add-time sections are computed in.
        public var calendar: Calendar

        /// SDE's defaults: a predefined sort, the trash closed, the standard classifier.
        public init(
            manualMode: Bool = false, isTrashOpened: Bool = false, classifier: FileTypeClassifier = .standard,
            listClock: @escaping @Sendable () -> Date = { Date() },
            calendar: Calendar = Calendar(identifier: .gregorian)
        ) {
            self.manualMode = manualMode
            self.isTrashOpened = isTrashOpened
            self.classifier = classifier
            self.listClock = listClock
            self.calendar = calendar
        }
    }

    /// The queue's identifier (the manager's), in its log and errors.
    public let identifier: String
    /// The engine on the store: the queue's persistence (restore, records, durable endings).
    package let queue: PersistentQueue
    /// The tasks that came back changed because the process ended while they ran (each also got
    /// a ``DownloadManagerEvent/restoredAfterForcedQuit(_:previousState:)`` event).
    public let restoredAfterForcedQuit: [String]
    /// What loading had to repair (store repairs, stored records the engine refused, list entries
    /// without a task, tasks missing from their list), for the log. Empty when all was sound.
    public let loadRepairs: [String]

    package let core: ManagerCore
    /// Called inside an operation that deleted tasks' files (the `Bool`: the tasks too), before
    /// it returns, so that a facade drops what it keeps of them (the manager: their thumbnails).
    /// It must not call the queue.
    package let filesDidGo: (@Sendable (_ urlStrings: [String], _ tasksRemoved: Bool) -> Void)?

    /// The queue itself.
    public var downloadQueue: DownloadQueue { self }

    /// Loads `store` synchronously: its tasks come back into an engine on `transport` (interrupted
    /// ones repaired) and its lists are rebuilt, never dropping a task.
    ///
    /// Options an earlier run saved (`maxDownloadCount`, the trash switch, speed limits, sort
    /// settings) win over `configuration`'s and `options`' initial values.
    ///
    /// - Throws: ``DownloadManagerError`` when the store cannot be read
    ///   (``DownloadManagerError/Code/storeFailed``) or the download directory cannot be made
    ///   (``DownloadManagerError/Code/directoryUnavailable``).
    public convenience init(
        identifier: String, transport: any Transport, store: any TaskStore,
        configuration: DownloadEngine.Configuration, options: Options = Options()
    ) throws(DownloadManagerError) {
        try self.init(
            identifier: identifier, transport: transport, store: store, snapshot: Self.load(store, identifier),
            configuration: configuration, options: options)
    }

    /// Reads a store for ``init(identifier:transport:store:configuration:options:)``.
    package static func load(_ store: any TaskStore, _ identifier: String) throws(DownloadManagerError) -> StoreSnapshot
    {
        do {
            return try store.load()
        } catch {
            throw DownloadManagerError(.storeFailed, "cannot load the store of \(identifier): \(error)")
        }
    }

    /// The queue on what `store` holds, `snapshot` (read by ``load(_:_:)``), for a facade that
    /// reads its own parts of the snapshot too.
    package init(
        identifier: String, transport: any Transport, store: any TaskStore, snapshot: StoreSnapshot,
        configuration: DownloadEngine.Configuration, options: Options,
        filesDidGo: (@Sendable (_ urlStrings: [String], _ tasksRemoved: Bool) -> Void)? = nil
    ) throws(DownloadManagerError) {
        self.identifier = identifier
        self.filesDidGo = filesDidGo
        // Options saved by an earlier run win over the initial values.
        var engineConfiguration = configuration
        if case .integer(let saved) = snapshot.configuration["maxDownloadCount"] {
            engineConfiguration.maxDownloadCount = Int(saved)
        }
        var trashOpened = options.isTrashOpened
        if case .boolean(let saved) = snapshot.configuration["isTrashOpened"] { trashOpened = saved }
        let savedLimits = ManagerCore.savedSpeedLimits(snapshot.configuration)
        if let overall = savedLimits.overall { engineConfiguration.overallSpeedLimit = overall }
        engineConfiguration.fileKindClassifier = options.classifier.classify
        var extras: [String: TaskExtras] = [:]
        for task in snapshot.tasks where task.displayName != nil || !task.metaInfo.isEmpty {
            extras[task.urlString] = TaskExtras(displayName: task.displayName, metaInfo: task.metaInfo)
        }
        var trashKeeps: Set<String> = []
        if case .array(let urls) = snapshot.configuration["trashKeepsFinishedFile"] {
            for case .string(let url) in urls { trashKeeps.insert(url) }
        }

        let drain = OrderedDrain()
        let core = ManagerCore(
            identifier: identifier,
            state: ManagerState(
                extras: extras, trashKeepsFinishedFile: trashKeeps, isTrashOpened: trashOpened,
                maxDownloadCount: engineConfiguration.maxDownloadCount, overallSpeedLimit: savedLimits.overall,
                listSpeedLimits: savedLimits.lists),
            store: store, drain: drain, classifier: options.classifier, logger: configuration.logger,
            listClock: options.listClock, calendar: options.calendar)
        self.core = core

        // Tasks back into the engine (the crash repair is the engine's), every change recorded.
        do {
            queue = try PersistentQueue(
                transport: transport, configuration: engineConfiguration, store: store, snapshot: snapshot,
                delegate: core, drain: drain, killPoint: "manager.durable", coordinator: core.coordinator)
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
        if lists[.default] == nil { lists[.default] = core.newList(manual: options.manualMode) }
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
            core.recordLists(loadedLists.keys.sorted(), configuration: true)
        }
        loadRepairs = repairs
        for repair in repairs { configuration.logger.warning("load repair", metadata: ["repair": "\(repair)"]) }

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

}

extension DownloadQueueing {
    /// The engine under the queue, for what the queue does not wrap.
    public var engine: DownloadEngine { downloadQueue.queue.engine }
    /// The store every change is written to.
    public var store: any TaskStore { downloadQueue.core.store }
    /// The queue's identifier (the manager's), in its log and errors.
    public var identifier: String { downloadQueue.identifier }
    /// The tasks that came back changed because the process ended while they ran (each also got
    /// a ``DownloadManagerEvent/restoredAfterForcedQuit(_:previousState:)`` event).
    public var restoredAfterForcedQuit: [String] { downloadQueue.restoredAfterForcedQuit }
    /// What loading had to repair (store repairs, stored records the engine refused, list entries
    /// without a task, tasks missing from their list), for the log. Empty when all was sound.
    public var loadRepairs: [String] { downloadQueue.loadRepairs }
    package var queue: PersistentQueue { downloadQueue.queue }
    package var core: ManagerCore { downloadQueue.core }

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
    ///
    /// The events of the operations inside reach ``events()`` once `body` returns (or sooner,
    /// before an event made outside it), all together: `body` must not wait for them.
    public func withGroupCommit<Result: Sendable>(_ body: () async -> Result) async -> Result {
        await SyncBatch.run(body)
    }

    // MARK: Order

    /// Pushes a list's order to the engine, whose queue follows it.
    func pushOrder(_ key: DownloadListKey) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let order = core.state.withLock { state -> [String]? in
            guard let list = state.lists[key] else { return [] }
            if let last = state.pushedGenerations[key], last == state.listGeneration { return nil }
            state.pushedGenerations[key] = state.listGeneration
            return list.downloadList.flatMap { $0 } + list.toDeleteList
        }
        if let order { engine.setListOrder(order, in: key) }
    }

    // MARK: Options

    /// The most tasks of a list downloading at once; ≤ 0 is unlimited. Lowering it stops the
    /// surplus at the end of the list and queues them; raising it starts them again. Saved.
    public var maxDownloadCount: Int {
        get { engine.maxDownloadCount }
        set {
            core.coordinator.enter()
            defer { core.coordinator.leave() }
            engine.maxDownloadCount = newValue
            core.state.withLock { $0.maxDownloadCount = newValue }
            core.recordConfiguration()
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
            core.coordinator.enter()
            defer { core.coordinator.leave() }
            core.state.withLock { $0.isTrashOpened = newValue }
            core.recordConfiguration()
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
    public var deleteCompletionHandler: DownloadQueue.DeleteCompletionHandler? {
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
