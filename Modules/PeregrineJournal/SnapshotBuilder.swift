/// Applies changes, in order, to build a ``StoreSnapshot``: O(1) per change (a removed task
/// is marked, and ``snapshot(repairs:)`` leaves the marked tasks out once).
import PeregrineCore
import PeregrineStorage

package struct SnapshotBuilder: Sendable {
    private var tasks: [StoredTask] = []
    /// Which entries of `tasks` were removed since (kept in place so that a removal is O(1)).
    private var removed: [Bool] = []
    private var removedCount = 0
    private var positions = TaskIndex()
    private var lists: [String: StoredList] = [:]
    /// Lists that list edits changed since their last whole record, in the form edits apply to
    /// (they take the place of their entry in `lists` until read).
    private var editedLists: [String: FlatList] = [:]
    private var configuration: [String: PropertyListValue] = [:]
    private var customThumbnails: [String: StoredCustomThumbnail] = [:]

    /// An empty builder with room for `capacity` tasks.
    package init(capacity: Int = 0) {
        reserveCapacity(capacity)
    }

    /// Makes room for `capacity` tasks in all.
    package mutating func reserveCapacity(_ capacity: Int) {
        tasks.reserveCapacity(capacity)
        removed.reserveCapacity(capacity)
        positions.reserveCapacity(capacity, tasks: tasks)
    }

    /// How many tasks it holds.
    package var taskCount: Int { positions.count }

    /// Whether it holds a task for `urlString`.
    package func contains(task urlString: String) -> Bool { positions.position(of: urlString, in: tasks) != nil }

    /// Applies one change.
    package mutating func apply(_ change: StoreChange) {
        switch change {
        case .putTask(let task):
            if let index = positions.position(of: task.urlString, in: tasks) {
                tasks[index] = task
            } else {
                tasks.append(task)
                positions.insert(task.urlString, at: tasks.count - 1, tasks: tasks)
                removed.append(false)
            }
        case .removeTask(let urlString):
            guard let index = positions.remove(urlString, in: tasks) else { return }
            removed[index] = true
            removedCount += 1
            customThumbnails[urlString] = nil
        case .putList(let list):
            lists[list.identifier] = list
            editedLists[list.identifier] = nil
        case .removeList(let identifier):
            lists[identifier] = nil
            editedLists[identifier] = nil
        case .setConfiguration(let value): configuration = value
        case .setCustomThumbnail(let urlString, let thumbnail): customThumbnails[urlString] = thumbnail
        }
    }

    /// Applies a list edit to the list it names; false (nothing changed) when the builder has no
    /// such list or the edit does not fit it (a record before it is missing).
    package mutating func apply(_ edit: StoredListEdit) -> Bool {
        if editedLists[edit.identifier] == nil {
            guard let list = lists[edit.identifier] else { return false }
            editedLists[edit.identifier] = FlatList(list)
        }
        return editedLists[edit.identifier]!.apply(edit)
    }

    /// Applies one record of a journal.
    package mutating func apply(_ record: StoreRecord) -> Bool {
        switch record {
        case .change(let change):
            apply(change)
            return true
        case .listEdit(let edit): return apply(edit)
        }
    }

    /// The lists, with their edits applied.
    private var currentLists: [String: StoredList] {
        guard !editedLists.isEmpty else { return lists }
        var result = lists
        for (identifier, flat) in editedLists { result[identifier] = flat.list }
        return result
    }

    /// Adds what `other` holds and this builder lacks (tasks, lists, thumbnails, and the
    /// configuration when this one has none); returns how many tasks it added.
    package mutating func merge(missingFrom other: SnapshotBuilder) -> Int {
        var added = 0
        for (index, task) in other.tasks.enumerated() {
            guard !other.removed[index], !contains(task: task.urlString) else { continue }
            apply(.putTask(task))
            added += 1
        }
        for (identifier, list) in other.currentLists where lists[identifier] == nil { lists[identifier] = list }
        for (url, thumbnail) in other.customThumbnails where customThumbnails[url] == nil {
            customThumbnails[url] = thumbnail
        }
        if configuration.isEmpty { configuration = other.configuration }
        return added
    }

    /// Everything as put records: what a compacted snapshot holds.
    package func changes() -> [StoreChange] {
        var result: [StoreChange] = []
        result.reserveCapacity(positions.count + lists.count + customThumbnails.count + 1)
        forEachChange { result.append($0) }
        return result
    }

    /// Calls `body` with a put record for everything held, tasks in their order.
    package func forEachChange(_ body: (StoreChange) -> Void) {
        if !configuration.isEmpty { body(.setConfiguration(configuration)) }
        for (index, task) in tasks.enumerated() where !removed[index] { body(.putTask(task)) }
        let lists = currentLists
        for identifier in lists.keys.sorted() { body(.putList(lists[identifier]!)) }
        for urlString in customThumbnails.keys.sorted() {
            body(.setCustomThumbnail(urlString: urlString, customThumbnails[urlString]))
        }
    }

    /// How many records ``forEachChange(_:)`` produces.
    package var recordCount: Int {
        positions.count + lists.count + customThumbnails.count + (configuration.isEmpty ? 0 : 1)
    }

    /// The snapshot.
    package func snapshot(repairs: [String]) -> StoreSnapshot {
        // Without removals the array is shared, not copied.
        var kept = tasks
        if removedCount > 0 {
            kept = []
            kept.reserveCapacity(positions.count)
            for (index, task) in tasks.enumerated() where !removed[index] { kept.append(task) }
        }
        return StoreSnapshot(
            tasks: kept, lists: currentLists, configuration: configuration, customThumbnails: customThumbnails,
            repairs: repairs)
    }
}
