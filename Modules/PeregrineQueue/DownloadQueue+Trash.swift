extension DownloadQueueing {
    /// The trash of the default list: deleted tasks, most recently deleted first (SDE's
    /// `toDeleteList`).
    public var toDeleteList: [String] { toDeleteList(in: .default) }

    /// The trash of a list, most recently deleted first.
    public func toDeleteList(in list: DownloadListKey) -> [String] {
        core.state.withLock { $0.lists[list]?.toDeleteList ?? [] }
    }

    // MARK: Restoring

    /// Puts tasks from the trash back into the list (SDE's `restoreToDeleteTasks(_:toLocation:)`).
    /// In manual mode they go to `location` in the order given (into a placeholder section when
    /// the list has none); in a predefined mode the sort places them. Their states are kept: a
    /// stopped task stays stopped until resumed.
    ///
    /// - Throws: ``DownloadManagerError/Code/unknownTask`` when a URL is not in the trash,
    ///   ``DownloadManagerError/Code/indexPathOutOfBounds`` for a bad location in manual mode;
    ///   nothing changes then.
    /// - Returns: the restored tasks' former rows in the trash (section 0).
    @discardableResult
    public func restoreToDeleteTasks(
        _ urlStrings: [String], toLocation location: ListIndexPath = ListIndexPath(section: 0, item: 0),
        in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let rows = try core.mutateList(list) { (list, _) throws(DownloadListError) in
            var change = ListChange()
            if let missing = urlStrings.first(where: { !list.isInTrash($0) }) {
                throw DownloadListError(.unknownURL, "\(missing) is not in the trash")
            }
            if list.sortType == .manual, list.sectionCount == 0, location == ListIndexPath(section: 0, item: 0) {
                change = try list.insertPlaceholderSection(at: 0, title: DownloadList.placeholderTitle)
            }
            let restored = try list.restoreFromTrash(urlStrings, to: location)
            change.deletedTrashIndexes = restored.deletedTrashIndexes
            change.insertedItems += restored.insertedItems
            change.insertedSections += restored.insertedSections
            change.isReload = change.isReload || restored.isReload
            return (change, restored.deletedTrashIndexes)
        }
        let keepsChanged = core.state.withLock { state in
            let before = state.trashKeepsFinishedFile
            state.trashKeepsFinishedFile.subtract(urlStrings)
            return before != state.trashKeepsFinishedFile
        }
        if keepsChanged { core.recordConfiguration() }
        pushOrder(list)
        core.announce([.restoredFromTrash(urlStrings)])
        return rows.sorted().map { ListIndexPath(section: 0, item: $0) }
    }

    /// Puts the tasks at trash rows back (SDE's `restoreToDeleteTasks(at:toLocation:)`).
    ///
    /// - Throws: ``DownloadManagerError/Code/trashIndexOutOfBounds``, and as
    ///   ``restoreToDeleteTasks(_:toLocation:in:)``.
    @discardableResult
    public func restoreToDeleteTasks(
        at indexes: [Int], toLocation location: ListIndexPath = ListIndexPath(section: 0, item: 0),
        in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return try restoreToDeleteTasks(try trashURLs(at: indexes, in: list), toLocation: location, in: list)
    }

    /// Puts every task of the trash back (SDE's `restoreAllToDeleteTasks(toLocation:)`).
    @discardableResult
    public func restoreAllToDeleteTasks(
        toLocation location: ListIndexPath = ListIndexPath(section: 0, item: 0), in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let urls = toDeleteList(in: list)
        guard !urls.isEmpty else { return [] }
        return try restoreToDeleteTasks(urls, toLocation: location, in: list)
    }

    // MARK: Cleaning up

    /// Deletes tasks in the trash for good, with their files — finished files stay when they were
    /// trashed with `keepFinishedFile` (SDE's `cleanupToDeleteTasks(_:)`).
    ///
    /// - Throws: ``DownloadManagerError/Code/unknownTask`` when a URL is not in the trash;
    ///   nothing changes then.
    /// - Returns: each cleaned task's former trash row (section 0).
    @discardableResult
    public func cleanupToDeleteTasks(
        _ urlStrings: [String], in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [String: ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        var seen: Set<String> = []
        let urls = urlStrings.filter { seen.insert($0).inserted }
        let (rows, keeping) = try core.state.withLock {
            (state) throws(DownloadManagerError) -> ([String: Int], Set<String>) in
            let trash = state.lists[list]?.toDeleteList ?? []
            var rowByURL: [String: Int] = [:]
            for (row, url) in trash.enumerated() { rowByURL[url] = row }
            var rows: [String: Int] = [:]
            var keeping: Set<String> = []
            for url in urls {
                guard let row = rowByURL[url] else {
                    throw DownloadManagerError(.unknownTask, "\(url) is not in the trash")
                }
                rows[url] = row
                if state.trashKeepsFinishedFile.contains(url) { keeping.insert(url) }
            }
            return (rows, keeping)
        }
        guard !urls.isEmpty else { return [:] }
        _ = engine.deleteTasks(urls.filter { keeping.contains($0) }, keepFinishedFile: true)
        _ = engine.deleteTasks(urls.filter { !keeping.contains($0) }, keepFinishedFile: false)
        try? core.mutateList(list) { (list, state) throws(DownloadListError) in
            for url in urls {
                state.extras[url] = nil
                state.handles[url] = nil
                state.trashKeepsFinishedFile.remove(url)
            }
            return (try list.removeFromTrash(urls.filter { list.isInTrash($0) }), ())
        }
        downloadQueue.filesDidGo?(urls, true)
        core.announce([.cleanedUp(urls)])
        let located = urls.map { ($0, ListIndexPath(section: 0, item: rows[$0]!)) }
        callDeleteHandler(located)
        return Dictionary(uniqueKeysWithValues: located)
    }

    /// Cleans up the tasks at trash rows (SDE's `cleanupToDeleteTasks(at:)`).
    ///
    /// - Throws: ``DownloadManagerError/Code/trashIndexOutOfBounds``; nothing changes then.
    @discardableResult
    public func cleanupToDeleteTasks(
        at indexes: [Int], in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [String: ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return try cleanupToDeleteTasks(try trashURLs(at: indexes, in: list), in: list)
    }

    /// Cleans up the trash rows `startIndex ... endIndex` (SDE's `cleanupToDeleteTasks(from:to:)`);
    /// an `endIndex` beyond the trash stops at its end.
    ///
    /// - Throws: ``DownloadManagerError/Code/trashIndexOutOfBounds`` when `startIndex` is negative
    ///   or beyond the trash, or `endIndex < startIndex`; nothing changes then.
    @discardableResult
    public func cleanupToDeleteTasks(
        from startIndex: Int, to endIndex: Int = Int.max, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [String: ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let count = toDeleteList(in: list).count
        guard startIndex >= 0, startIndex < count, endIndex >= startIndex else {
            throw DownloadManagerError(
                .trashIndexOutOfBounds, "range \(startIndex) ... \(endIndex) is outside the trash of \(count)")
        }
        return try cleanupToDeleteTasks(at: Array(startIndex...min(endIndex, count - 1)), in: list)
    }

    /// Cleans up the whole trash (SDE's `emptyToDeleteList()`).
    @discardableResult
    public func emptyToDeleteList(in list: DownloadListKey = .default) -> [String: ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return (try? cleanupToDeleteTasks(toDeleteList(in: list), in: list)) ?? [:]
    }

    /// The URL strings at trash rows.
    func trashURLs(at indexes: [Int], in list: DownloadListKey) throws(DownloadManagerError) -> [String] {
        do {
            return try core.state.withLock { (state) throws(DownloadListError) in
                try (state.lists[list] ?? core.newList()).trashURLs(at: indexes)
            }
        } catch {
            throw DownloadManagerError(error)
        }
    }
}
