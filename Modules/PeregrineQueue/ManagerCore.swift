import Logging
import PeregrineCore
import PeregrinePersistence
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the manager keeps of a task beside the engine's record.
struct TaskExtras: Sendable, Hashable {
    /// The name shown instead of the file name (SDE's `changeDisplayNameOfTask`).
    var displayName: String?
    /// The caller's property-list meta info.
    var metaInfo: [String: PropertyListValue] = [:]

    var isEmpty: Bool { displayName == nil && metaInfo.isEmpty }
}

/// The manager's state, touched only in the coordinator's steps: the lists and what the manager
/// adds to the engine's records. It holds no copy of the engine's records (the engine's are the
/// only ones), save the latest of each task added but not listed yet.
struct ManagerState {
    var lists: [DownloadListKey: DownloadList] = [:]
    var extras: [String: TaskExtras] = [:]
    /// The latest record of each task the engine reported before it joined a list (added, not
    /// placed yet): ``DownloadQueueing/place(_:in:_:)`` lists it with this one.
    var unlisted: [String: DownloadTaskRecord] = [:]
    /// The trashed tasks whose finished file stays when they are cleaned up.
    var trashKeepsFinishedFile: Set<String> = []
    var isTrashOpened: Bool
    var maxDownloadCount: Int
    /// The lists with their own concurrency limit.
    var listLimits: [DownloadListKey: Int] = [:]
    /// The manager's speed limit as last set through the API (`.some(nil)`: set to none);
    /// nil while only the configuration gave it, which is then not saved.
    var overallSpeedLimit: SpeedLimit?? = nil
    /// The lists with their own speed limit.
    var listSpeedLimits: [DownloadListKey: SpeedLimit] = [:]
    /// Increases with every list mutation (a custom sort checks it did not race one).
    var listGeneration: UInt64 = 0
    /// The ``listGeneration`` whose order each list last gave the engine.
    var pushedGenerations: [DownloadListKey: UInt64] = [:]
    var handles: [String: [DownloadTaskHandle]] = [:]
    var deleteCompletionHandler: DownloadQueue.DeleteCompletionHandler?

    /// The list that shows a task, or holds it in its trash.
    func listKey(of url: String) -> DownloadListKey? {
        lists.first { $0.value.contains(url) }?.key
    }

    /// A task's location in its list; nil in the trash.
    func location(of url: String) -> ListIndexPath? {
        for list in lists.values { if let location = list[url] { return location } }
        return nil
    }

    /// Whether the engine reported the task (listed, in the trash, or added and not placed yet).
    func isTask(_ url: String) -> Bool { unlisted[url] != nil || listKey(of: url) != nil }
}

/// The queue's state, the store and the event broadcaster; the ``PersistentQueue`` under the
/// queue calls it back (as its `QueueRecordingDelegate`) from its ``OrderedDrain`` with the
/// engine's record changes, in sequence order, and the engine's events.
///
/// The state is the ``coordinator``'s, which the engine shares: a public operation is one step
/// (`coordinator.enter()` … `leave()`), the drain's calls are steps of their own. Nothing in a
/// step waits for another thread: the core's store writes (``record(_:)``) and the
/// application's closures (task handles, handlers) run from the step's outbox, after it.
package final class ManagerCore: QueueRecordingDelegate {
    let identifier: String
    /// The owner of the manager's state, the engine's and the queue's (see ``Coordinator``):
    /// each public operation is one step.
    package let coordinator: Coordinator
    let state: Coordinated<ManagerState>
    let store: any TaskStore
    /// The queue's drain, which every store write goes through, in order with the engine's.
    package let drain: OrderedDrain
    let broadcaster = EventBroadcaster<DownloadManagerEvent>()
    /// The event holds of the group commits running now (see ``announce(_:)``).
    private let holds = Locked<[ObjectIdentifier: EventBroadcaster<DownloadManagerEvent>.Hold]>([:])
    let classifier: FileTypeClassifier
    let logger: Logger
    let listClock: @Sendable () -> Date
    let calendar: Calendar
    let lastStoreError = Locked<StoreError?>(nil)
    /// The last classification of each task's file (see ``kind(_:)``); its own lock, taken
    /// last, so it can be used with or without ``state``'s.
    private let kinds = Locked<[String: (key: KindKey, kind: FileKind)]>([:])

    /// The lists (and whether the configuration) that each running group commit writes at its
    /// end, by batch.
    private let listsOfBatches = Locked<[ObjectIdentifier: (keys: Set<DownloadListKey>, configuration: Bool)]>([:])

    /// What a file's kind depends on.
    struct KindKey: Hashable {
        /// The record's file name and preferred file name: the URL's name is used only when both
        /// are nil, and the URL is the cache's key.
        var fileName: String?
        var preferredFileName: String?
        var mimeType: String?
    }

    init(
        identifier: String, state: ManagerState, store: any TaskStore, drain: OrderedDrain,
        classifier: FileTypeClassifier, logger: Logger, listClock: @escaping @Sendable () -> Date, calendar: Calendar
    ) {
        self.identifier = identifier
        let coordinator = Coordinator()
        self.coordinator = coordinator
        self.state = Coordinated(state, coordinator: coordinator)
        self.store = store
        self.drain = drain
        self.classifier = classifier
        self.logger = logger
        self.listClock = listClock
        self.calendar = calendar
    }

    // MARK: The engine's records and events

    /// The stored form of fresh record changes, with the manager's extras; a listed task's item
    /// follows its record.
    package func storeChanges(for changes: [TaskRecordChange]) -> [StoreChange] {
        state.withLock { state in
            var storeChanges: [StoreChange] = []
            var events: [DownloadManagerEvent] = []
            var touchedLists: Set<DownloadListKey> = []
            for change in changes {
                let url = change.urlString
                switch change.kind {
                case .upsert(let record):
                    let extras = state.extras[url] ?? TaskExtras()
                    storeChanges.append(.putTask(storedTask(record, extras)))
                    guard let current = state.lists[record.list]?.item(for: url) else {
                        state.unlisted[url] = record
                        continue
                    }
                    // Most changes are progress: nothing the list shows.
                    let item = listItem(record, extras)
                    guard current != item else { continue }
                    if let listChange = try? state.lists[record.list]?.update(item), !listChange.isEmpty {
                        state.listGeneration += 1
                        touchedLists.insert(record.list)
                        events.append(.listChanged(record.list, listChange))
                    }
                case .remove:
                    state.unlisted[url] = nil
                    kinds.withLock { $0[url] = nil }
                    storeChanges.append(.removeTask(urlString: url))
                }
            }
            for key in touchedLists.sorted() {
                if let list = state.lists[key] { storeChanges.append(.putList(storedList(key, list, state))) }
            }
            announce(events)
            return storeChanges
        }
    }

    /// Hands events to the subscribers. Inside a group commit (``SyncBatch``) they are held
    /// until its body returns, or until an event comes from outside it: the subscribers' tasks
    /// then wake once for the batch's events, not once an event (a `system.multicall` of 500
    /// `aria2.addUri` put a thread to sleep about five times an addition). Nothing made in a batch is
    /// reported as done before it ends, so its events may wait as long.
    func announce(_ events: [DownloadManagerEvent]) {
        guard let batch = SyncBatch.current else {
            broadcaster.yield(events)
            return
        }
        let key = ObjectIdentifier(batch)
        let hold = holds.withLock { holds -> EventBroadcaster<DownloadManagerEvent>.Hold? in
            if let hold = holds[key] { return hold }
            let hold = EventBroadcaster<DownloadManagerEvent>.Hold()
            let released = batch.atEnd { [weak self] in
                self?.holds.withLock { _ = $0.removeValue(forKey: key) }
                self?.broadcaster.release(hold)
            }
            // Past the batch's end (the work of a task that outlived its body): at once.
            guard released else { return nil }
            holds[key] = hold
            return hold
        }
        broadcaster.yield(events, holding: hold)
    }

    /// Hands engine events to the subscribers (in a step, so that events keep their order
    /// across threads); the task handles get them after it, once the operation of this thread
    /// is done.
    package func publish(_ events: [EngineEvent]) -> (@Sendable () -> Void)? {
        let handles = state.withLock { state in
            events.flatMap { event -> [(DownloadTaskHandle, EngineEvent)] in
                var published: [DownloadManagerEvent] = [.task(event)]
                if case .restored(let url, let previous) = event {
                    published.append(.restoredAfterForcedQuit(url, previousState: previous))
                }
                announce(published)
                let handles = state.handles[event.urlString] ?? []
                if case .deleted = event { state.handles[event.urlString] = nil }
                return handles.map { ($0, event) }
            }
        }
        guard !handles.isEmpty else { return nil }
        return { [coordinator] in coordinator.afterStep { for (handle, event) in handles { handle.deliver(event) } } }
    }

    /// Keeps the queue's store failure (the queue logged it).
    package func storeFailed(_ error: StoreError) {
        lastStoreError.withLock { $0 = error }
    }

    /// An application's completion handler, run after the operation that caused it (see
    /// ``Coordinator/afterStep(_:)``).
    func deferred(_ handler: TaskCompletionHandler?) -> TaskCompletionHandler? {
        guard let handler else { return nil }
        return { [coordinator] url, result in coordinator.afterStep { handler(url, result) } }
    }

    // MARK: The store

    /// Records changes in order with the engine's, through the queue's drain, after the calling
    /// operation's step: `changes` is called when their turn comes (it may read ``state``), so
    /// that a list or the configuration is written as it is then, never older than what another
    /// thread wrote before. The operation returns once they are synced (or by the end of the
    /// ``SyncBatch`` the calling task runs); a failure is logged and kept in ``lastStoreError``.
    package func record(_ changes: @escaping @Sendable () -> [StoreChange]) {
        // After the operation's step: the write may wait for the drain's turn, and the thread
        // draining may need a step to get there.
        let batch = SyncBatch.current
        coordinator.afterStep { [self] in
            SyncBatch.$current.withValue(batch) {
                drain.record(changes, in: store) { [weak self] error in
                    self?.lastStoreError.withLock { $0 = error }
                    self?.logger.error("store failed to record changes", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Records the lists' states as they are when written (and the configuration, with
    /// `configuration`).
    ///
    /// Inside a group commit (``SyncBatch``) each list is written once, at the batch's end:
    /// nothing made in the batch is reported done before then, and a list is written whole, so
    /// 500 additions to a list of n tasks would otherwise build it 500 times (O(n) each).
    func recordLists(_ keys: [DownloadListKey], configuration: Bool = false) {
        if let batch = SyncBatch.current {
            let id = ObjectIdentifier(batch)
            let first = listsOfBatches.withLock { batches -> Bool in
                let first = batches[id] == nil
                batches[id, default: ([], false)].keys.formUnion(keys)
                if configuration { batches[id]!.configuration = true }
                return first
            }
            guard first else { return }
            let flush: @Sendable () -> Void = { [self] in
                guard let lists = listsOfBatches.withLock({ $0.removeValue(forKey: id) }) else { return }
                writeLists(lists.keys.sorted(), configuration: lists.configuration)
            }
            if !batch.atEnd(flush) { flush() }
            return
        }
        writeLists(keys, configuration: configuration)
    }

    private func writeLists(_ keys: [DownloadListKey], configuration: Bool) {
        record { [self] in
            state.withLock { state in
                var changes = keys.compactMap { key in
                    state.lists[key].map { StoreChange.putList(storedList(key, $0, state)) }
                }
                if configuration { changes.append(.setConfiguration(storedConfiguration(state))) }
                return changes
            }
        }
    }

    /// Records the manager's options as they are when written.
    func recordConfiguration() {
        record { [self] in [.setConfiguration(state.withLock { storedConfiguration($0) })] }
    }

    /// A list's state, as the store keeps it.
    func storedList(_ key: DownloadListKey, _ list: DownloadList, _ state: ManagerState) -> StoredList {
        let listState = list.state
        return StoredList(
            identifier: key.rawValue, sections: listState.sections, sectionTitles: listState.sectionTitles,
            trash: listState.toDeleteList, sortType: listState.sortType.rawValue,
            sortOrder: listState.sortOrder.rawValue, sectioning: listState.sectioning.rawValue,
            addTimeReference: listState.addTimeReference, maxDownloadCount: state.listLimits[key])
    }

    /// The manager's saved options.
    func storedConfiguration(_ state: ManagerState) -> [String: PropertyListValue] {
        let trashKeeps = state.trashKeepsFinishedFile.sorted().map(PropertyListValue.string)
        var configuration: [String: PropertyListValue] = [
            "maxDownloadCount": .integer(Int64(state.maxDownloadCount)),
            "isTrashOpened": .boolean(state.isTrashOpened),
            "trashKeepsFinishedFile": .array(trashKeeps),
        ]
        // Speed limits in bytes per second; 0 is none.
        if let overall = state.overallSpeedLimit {
            configuration[Self.overallSpeedLimitKey] = .integer(overall?.bytesPerSecond ?? 0)
        }
        if !state.listSpeedLimits.isEmpty {
            var lists: [String: PropertyListValue] = [:]
            for (key, limit) in state.listSpeedLimits { lists[key.rawValue] = .integer(limit.bytesPerSecond) }
            configuration[Self.listSpeedLimitsKey] = .dictionary(lists)
        }
        return configuration
    }

    static let overallSpeedLimitKey = "overallSpeedLimit"
    static let listSpeedLimitsKey = "listSpeedLimits"

    /// The speed limits an earlier run saved: the manager's (`.some(nil)` for none, nil when
    /// never saved) and the lists'. Values a store cannot hold as a limit are ignored.
    static func savedSpeedLimits(
        _ configuration: [String: PropertyListValue]
    ) -> (overall: SpeedLimit??, lists: [DownloadListKey: SpeedLimit]) {
        func limit(_ value: PropertyListValue?) -> SpeedLimit?? {
            guard case .integer(let bytes) = value else { return nil }
            if bytes == 0 { return .some(nil) }
            guard let limit = try? SpeedLimit(bytesPerSecond: bytes) else { return nil }
            return .some(limit)
        }
        var lists: [DownloadListKey: SpeedLimit] = [:]
        if case .dictionary(let saved) = configuration[listSpeedLimitsKey] {
            for (name, value) in saved {
                if case .some(.some(let speed)) = limit(value) { lists[DownloadListKey(name)] = speed }
            }
        }
        return (limit(configuration[overallSpeedLimitKey]), lists)
    }

    /// A record with the manager's extras, as the store keeps it.
    func storedTask(_ record: DownloadTaskRecord, _ extras: TaskExtras) -> StoredTask {
        StoredTask(record, displayName: extras.displayName, metaInfo: extras.metaInfo, kind: kind(record))
    }

    // MARK: List items

    /// The name a task is shown and sorted by.
    func sortName(_ record: DownloadTaskRecord, _ extras: TaskExtras) -> String {
        extras.displayName ?? record.fileName ?? record.preferredFileName ?? Self.nameInURL(record.urlString)
    }

    /// The name a task's file is classified by before the response named it: the URL's last
    /// path component (without query or fragment), else the whole URL string. Called for
    /// every record change, so it does not allocate more than the result.
    static func nameInURL(_ urlString: String) -> String {
        var path = urlString.prefix { $0 != "?" && $0 != "#" }
        while path.last == "/" { path = path.dropLast() }
        guard !path.isEmpty else { return urlString }
        guard let slash = path.lastIndex(of: "/") else { return String(path) }
        return String(path[path.index(after: slash)...])
    }

    /// The kind of a task's file, classified once per file name and MIME type. A cache hit
    /// compares the record's fields with the cached ones (equal strings sharing storage compare
    /// in O(1)) without building the name the classification used.
    func kind(_ record: DownloadTaskRecord) -> FileKind {
        let key = KindKey(
            fileName: record.fileName, preferredFileName: record.preferredFileName, mimeType: record.mimeType)
        if let known = kinds.withLock({ $0[record.urlString] }), known.key == key { return known.kind }
        let name = record.fileName ?? record.preferredFileName ?? Self.nameInURL(record.urlString)
        let kind = classifier.fileType(ofFileNamed: name, mimeType: record.mimeType)
        kinds.withLock { $0[record.urlString] = (key, kind) }
        return kind
    }

    /// What the list sorts a task by.
    func listItem(_ record: DownloadTaskRecord, _ extras: TaskExtras) -> ListItem {
        ListItem(
            url: record.urlString, fileName: sortName(record, extras), fileSize: record.expectedLength ?? -1,
            addTime: record.addedAt, kind: kind(record), isFinished: record.state == .finished)
    }

    /// A new empty list.
    func newList(manual: Bool = false) -> DownloadList {
        DownloadList(sortType: manual ? .manual : .addTime, clock: listClock, calendar: calendar)
    }

    // MARK: List mutations

    /// Runs `body` on a list in a step; a non-empty change is recorded in the store and
    /// announced. Errors of the list model become manager errors, and the list is unchanged.
    func mutateList<Result>(
        _ key: DownloadListKey,
        _ body: (inout DownloadList, inout ManagerState) throws(DownloadListError) -> (ListChange, Result)
    ) throws(DownloadManagerError) -> Result {
        do {
            let outcome = try state.withLock { (state) throws(DownloadListError) -> (Result, Bool?) in
                if state.lists[key] == nil { state.lists[key] = newList() }
                var list = state.lists.removeValue(forKey: key)!
                defer { state.lists[key] = list }
                let keeps = state.trashKeepsFinishedFile
                let (change, result) = try body(&list, &state)
                if !change.isEmpty {
                    state.listGeneration += 1
                    announce([.listChanged(key, change)])
                }
                return (result, change.isEmpty ? nil : state.trashKeepsFinishedFile != keeps)
            }
            if let configuration = outcome.1 { recordLists([key], configuration: configuration) }
            return outcome.0
        } catch {
            throw DownloadManagerError(error)
        }
    }

}
