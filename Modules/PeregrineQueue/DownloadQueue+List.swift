extension DownloadQueueing {
    /// A copy of a list (O(1), copy on write): everything the list model answers, consistent.
    public func list(_ key: DownloadListKey = .default) -> DownloadList {
        core.state.withLock { $0.lists[key] ?? core.newList() }
    }

    /// The download lists (scopes) the manager holds, sorted.
    public var lists: [DownloadListKey] { core.state.withLock { $0.lists.keys.sorted() } }

    // MARK: The default list as a data source

    /// The tasks of the default list by section (SDE's `downloadList`).
    public var downloadList: [[String]] { list().downloadList }
    /// The section titles of the default list (SDE's `sectionTitles`).
    public var sectionTitles: [String] { list().sectionTitles }
    /// The number of sections (SDE's `sectionCount`).
    public var sectionCount: Int { list().sectionCount }
    /// The unfinished tasks of the list, most recently added first (SDE's `unfinishedList`).
    public var unfinishedList: [String] { list().unfinishedList }
    /// The tasks of the list (SDE's `downloadTaskSet`).
    public var downloadTaskSet: Set<String> { list().downloadTaskSet }
    /// The tasks of the list and the trash (SDE's `allTasksSet`).
    public var allTasksSet: Set<String> { list().allTasksSet }
    /// The sort type of the default list (SDE's `sortType`).
    public var sortType: ListSortType { list().sortType }
    /// The sort order of the default list (SDE's `sortOrder`).
    public var sortOrder: ListSortOrder { list().sortOrder }

    /// The number of tasks in a section; nil when out of bounds (SDE's `taskCountInSection`,
    /// which answered -1).
    public func taskCount(inSection section: Int, in list: DownloadListKey = .default) -> Int? {
        core.state.withLock { $0.lists[list]?.taskCountInSection(section) }
    }

    /// A section's title; nil when out of bounds (SDE's `titleForHeaderInSection`).
    public func titleForHeader(inSection section: Int, in list: DownloadListKey = .default) -> String? {
        core.state.withLock { $0.lists[list]?.titleForHeaderInSection(section) }
    }

    /// A task's location in the default list; nil when it is not there (maybe in the trash).
    public subscript(urlString: String) -> ListIndexPath? { indexPath(ofTask: urlString) }

    /// The task at a location of the default list; nil when out of bounds.
    public subscript(indexPath: ListIndexPath) -> String? { downloadURLString(at: indexPath) }

    /// A task's location in its list (SDE's `indexPath(ofTask:)`).
    public func indexPath(ofTask urlString: String) -> ListIndexPath? {
        core.state.withLock { state in state.location(of: urlString) }
    }

    /// The task at a location (SDE's `downloadURLString(at:)`).
    public func downloadURLString(at indexPath: ListIndexPath, in list: DownloadListKey = .default) -> String? {
        core.state.withLock { $0.lists[list]?[indexPath] }
    }

    // MARK: Sorting

    /// Sorts a list by a predefined type, or switches it to manual mode (SDE's
    /// `sortListBy(type:order:)`): manual → predefined drops the titles; predefined → manual
    /// merges all tasks into one placeholder section.
    public func sortListBy(type: ListSortType, order: ListSortOrder = .ascending, in list: DownloadListKey = .default) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try? core.mutateList(list) { (list, _) throws(DownloadListError) in
            (list.sortListBy(type: type, order: order), ())
        }
        pushOrder(list)
    }

    /// Sorts a list with the caller's predicates and switches it to manual mode (SDE's
    /// `sortListBy(order:taskTrait:traitAscending:taskAscending:)`): tasks with the same trait
    /// share a section titled by it; nil traits go to a last placeholder section.
    ///
    /// The closures get URL strings and run inside the operation (re-entrant), so they may query the
    /// manager (`info(ofTask:about:)`, `fileDisplayName(ofTask:)` …), as SDE's examples do.
    ///
    /// - Throws: ``DownloadManagerError/Code/inconsistentOrdering`` when a predicate is not a
    ///   strict weak ordering, ``DownloadManagerError/Code/concurrentModification`` when a
    ///   predicate changed the list; the list is unchanged then.
    public func sortListBy(
        order: ListSortOrder,
        taskTrait: ((_ urlString: String) -> String?)? = nil,
        traitAscending: ((_ first: String, _ second: String) -> Bool)? = nil,
        taskAscending: (_ first: String, _ second: String) -> Bool,
        in list: DownloadListKey = .default
    ) throws(DownloadManagerError) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let (original, generation) = core.state.withLock { ($0.lists[list] ?? core.newList(), $0.listGeneration) }
        var copy = original
        let change: ListChange
        do {
            if let taskTrait {
                change = try copy.sortListBy(
                    order: order, taskTrait: { taskTrait($0.url) }, traitAscending: traitAscending,
                    taskAscending: { taskAscending($0.url, $1.url) })
            } else {
                change = try copy.sortListBy(
                    order: order, taskTrait: nil, traitAscending: traitAscending,
                    taskAscending: { taskAscending($0.url, $1.url) })
            }
        } catch {
            throw DownloadManagerError(error)
        }
        let sorted = copy
        let raced = try core.mutateList(list) { (current, state) throws(DownloadListError) -> (ListChange, Bool) in
            // A predicate changed the list (through the manager, re-entrant): sorting the copy
            // would undo it.
            guard state.listGeneration == generation else { return (ListChange(), true) }
            current = sorted
            return (change, false)
        }
        if raced {
            throw DownloadManagerError(
                .concurrentModification, "the list changed while it was being sorted; nothing was changed")
        }
        pushOrder(list)
    }

    /// Whether the addTime sort is split into Today, Yesterday, … sections (SDE's
    /// `sectioningAddTimeList`).
    public var sectioningAddTimeList: Bool {
        get { list().sectioningAddTimeList }
        set { setSectioning(.addTime, newValue) }
    }

    /// Whether the fileSize sort is split into size sections (SDE's `sectioningFileSizeList`).
    public var sectioningFileSizeList: Bool {
        get { list().sectioningFileSizeList }
        set { setSectioning(.fileSize, newValue) }
    }

    /// Whether the fileName sort is split into an A–Z + "#" index (SDE's `indexingFileNameList`).
    public var indexingFileNameList: Bool {
        get { list().indexingFileNameList }
        set { setSectioning(.fileNameIndex, newValue) }
    }

    /// Sets which predefined types of a list are sectioned, sorting again when needed.
    public func setSectioning(_ sectioning: ListSectioning, in list: DownloadListKey = .default) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try? core.mutateList(list) { (list, _) throws(DownloadListError) in
            (list.setSectioning(sectioning), ())
        }
        pushOrder(list)
    }

    private func setSectioning(_ option: ListSectioning, _ on: Bool) {
        var sectioning = list().sectioning
        if on { sectioning.insert(option) } else { sectioning.remove(option) }
        setSectioning(sectioning)
    }

    // MARK: Manual mode

    /// Moves a task in manual mode (SDE's `moveTask(at:to:)`); `newIndexPath` is where it ends up.
    ///
    /// - Throws: ``DownloadManagerError/Code/requiresManualMode``,
    ///   ``DownloadManagerError/Code/indexPathOutOfBounds``; nothing changes then.
    public func moveTask(
        at indexPath: ListIndexPath, to newIndexPath: ListIndexPath, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try core.mutateList(list) { (list, _) throws(DownloadListError) in
            (try list.moveTask(at: indexPath, to: newIndexPath), ())
        }
        pushOrder(list)
    }

    /// Moves a whole section in manual mode (SDE's `moveTasks(inSection:to:)`).
    ///
    /// - Throws: ``DownloadManagerError/Code/requiresManualMode``,
    ///   ``DownloadManagerError/Code/sectionOutOfBounds``; nothing changes then.
    public func moveTasks(inSection section: Int, to newSection: Int, in list: DownloadListKey = .default)
        throws(DownloadManagerError)
    {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try core.mutateList(list) { (list, _) throws(DownloadListError) in
            (try list.moveTasks(inSection: section, to: newSection), ())
        }
        pushOrder(list)
    }

    /// Changes a section's title in manual mode (SDE's `changeTitleOfSection(_:to:)`).
    ///
    /// - Throws: ``DownloadManagerError/Code/requiresManualMode``,
    ///   ``DownloadManagerError/Code/sectionOutOfBounds``,
    ///   ``DownloadManagerError/Code/invalidArgument`` (empty title).
    public func changeTitleOfSection(_ section: Int, to newTitle: String, in list: DownloadListKey = .default)
        throws(DownloadManagerError)
    {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try core.mutateList(list) { (list, _) throws(DownloadListError) in
            (try list.changeTitleOfSection(section, to: newTitle), ())
        }
    }

    /// Removes an empty section in manual mode.
    ///
    /// - Throws: ``DownloadManagerError/Code/requiresManualMode``,
    ///   ``DownloadManagerError/Code/sectionOutOfBounds``,
    ///   ``DownloadManagerError/Code/invalidArgument`` (the section holds tasks).
    public func removeEmptySection(_ section: Int, in list: DownloadListKey = .default) throws(DownloadManagerError) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try core.mutateList(list) { (list, _) throws(DownloadListError) in
            (try list.removeEmptySection(section), ())
        }
    }

    /// Gives a list its own concurrency limit (Reed's per-list limits), or nil to follow
    /// ``maxDownloadCount``.
    public func setMaxDownloadCount(_ limit: Int?, in list: DownloadListKey) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        engine.setMaxDownloadCount(limit, in: list)
        core.state.withLock { state in
            state.listLimits[list] = limit
            if state.lists[list] == nil { state.lists[list] = core.newList() }
        }
        core.recordLists([list])
    }
}
