/// Copies a manager's state from one store to another, whatever their backends: how a JSON
/// store becomes a property-list store and back.
public enum StoreConversion {
    /// Makes `destination` hold exactly what `source` holds, then compacts it.
    ///
    /// Loads `source` (its ``StoreSnapshot/repairs`` are returned, so that a conversion of a
    /// damaged store is never silent), removes what `destination` held that `source` lacks, records every task, list, custom thumbnail and the configuration, and
    /// compacts `destination` into one snapshot. The source is not changed.
    ///
    /// - Returns: what the load of `source` had to repair.
    @discardableResult
    public static func copy(from source: any TaskStore, to destination: any TaskStore) throws(StoreError)
        -> [String]
    {
        let snapshot = try source.load()
        let existing = try destination.load()
        var changes: [StoreChange] = []
        changes.reserveCapacity(snapshot.tasks.count + snapshot.lists.count + snapshot.customThumbnails.count + 8)
        // Remove every existing task first, so that the tasks end up in the source's order.
        for task in existing.tasks { changes.append(.removeTask(urlString: task.urlString)) }
        for identifier in existing.lists.keys where snapshot.lists[identifier] == nil {
            changes.append(.removeList(identifier: identifier))
        }
        for (urlString, _) in existing.customThumbnails where snapshot.customThumbnails[urlString] == nil {
            changes.append(.setCustomThumbnail(urlString: urlString, nil))
        }
        changes.append(.setConfiguration(snapshot.configuration))
        for task in snapshot.tasks { changes.append(.putTask(task)) }
        for identifier in snapshot.lists.keys.sorted() { changes.append(.putList(snapshot.lists[identifier]!)) }
        for urlString in snapshot.customThumbnails.keys.sorted() {
            changes.append(.setCustomThumbnail(urlString: urlString, snapshot.customThumbnails[urlString]))
        }
        try destination.record(changes)
        try destination.compact()
        return snapshot.repairs
    }
}
