/// Adding tasks: by the predefined order, or at a location in manual mode.
extension DownloadList {
    /// Adds tasks in a predefined mode, where the sort places them; switches the type to
    /// ``ListSortType/addTime`` when it is another predefined type and at least one task is new
    /// (SDE's `download(_:)`).
    ///
    /// Items whose URL is already in the list or the trash, or repeated in `items`, are skipped.
    /// In addTime mode nothing else moves: new tasks (the newest) are appended to their section
    /// in O(1) each, in either order; tasks with older times are merged in. When the add-time
    /// sections were made on an earlier day, the list is sorted again first.
    ///
    /// - Throws: ``DownloadListError/Code/requiresPredefinedMode`` in manual mode (use
    ///   ``insert(_:at:)`` or ``insert(_:atSection:title:)``).
    /// - Returns: the inserted items and sections, or ``ListChange/reload`` when the list was
    ///   sorted (type switch, stale add-time groups).
    /// - Complexity: O(k log k) for k new tasks that sort after every other (the usual case in
    ///   addTime mode), O(k log k + m) when they land before m tasks of their section;
    ///   O((n + k) log(n + k)) when the list is sorted.
    @discardableResult
    public mutating func add(_ items: [ListItem]) throws(DownloadListError) -> ListChange {
        guard sortType != .manual else {
            throw DownloadListError(
                .requiresPredefinedMode,
                "adding without a location needs a predefined sort type; in manual mode insert at a "
                    + "section or an index path"
            )
        }
        let slots = allocateNew(items)
        guard !slots.isEmpty else { return ListChange() }
        if sortType != .addTime {
            sortType = .addTime
            rebuildPredefined()
            return .reload
        }
        return placeWithChange(slots)
    }

    /// Places detached slots in a predefined mode and describes the insertions, or sorts again
    /// when the add-time groups are stale.
    mutating func placeWithChange(_ slots: [Slot]) -> ListChange {
        if addTimeGroupsAreStale {
            rebuildPredefined()
            return .reload
        }
        let created = placePredefined(slots)
        var change = ListChange()
        let shown = shownSectionIndexes()
        change.insertedSections = created.map { shown[$0]! }.sorted()
        change.insertedItems = slots.compactMap { slot in
            created.contains(entries[Int(slot)].section) ? nil : indexPath(ofSlot: slot)
        }.sorted()
        return change
    }

    /// Inserts an empty, titled section in manual mode (SDE's
    /// `insertPlaceHolderSectionInManualModeAtSection(_:withTitle:)`).
    ///
    /// - Parameter section: where the new section goes, `0 ... sectionCount`.
    /// - Parameter title: the section's title, not empty.
    /// - Throws: ``DownloadListError/Code/requiresManualMode``,
    ///   ``DownloadListError/Code/sectionOutOfBounds``, ``DownloadListError/Code/emptyTitle``.
    /// - Complexity: O(sections).
    @discardableResult
    public mutating func insertPlaceholderSection(
        at section: Int,
        title: String
    ) throws(DownloadListError) -> ListChange {
        try checkManualMode("inserting a section")
        try checkNewSection(section)
        try checkTitle(title)
        _ = insertSection(at: section, title: title, rank: 0)
        var change = ListChange()
        change.insertedSections = [section]
        return change
    }

    /// Inserts tasks as a new titled section in manual mode (SDE's
    /// `download(_:inManualModeAtSection:withTitle:)`).
    ///
    /// Items already in the list or the trash, or repeated, are skipped; when none is left, no
    /// section is made and the change is empty.
    ///
    /// - Parameter items: the tasks to insert, in order.
    /// - Parameter section: where the new section goes, `0 ... sectionCount`.
    /// - Parameter title: the section's title, not empty.
    /// - Throws: ``DownloadListError/Code/requiresManualMode``,
    ///   ``DownloadListError/Code/sectionOutOfBounds``, ``DownloadListError/Code/emptyTitle``.
    /// - Complexity: O(k + sections).
    @discardableResult
    public mutating func insert(
        _ items: [ListItem],
        atSection section: Int,
        title: String
    ) throws(DownloadListError) -> ListChange {
        try insert(sections: [items], titles: [title], atSection: section)
    }

    /// Inserts several groups of tasks as new titled sections in manual mode (SDE's
    /// `download(_:inManualModeAtSection:withTitles:)`).
    ///
    /// Items already in the list or the trash, or repeated, are skipped; a group left empty makes
    /// no section. The sections made are consecutive from `section`.
    ///
    /// - Parameters:
    ///   - groups: the tasks of each new section.
    ///   - titles: one title per group (extra titles are ignored), none empty.
    ///   - section: where the first new section goes, `0 ... sectionCount`.
    /// - Throws: ``DownloadListError/Code/requiresManualMode``,
    ///   ``DownloadListError/Code/sectionOutOfBounds``, ``DownloadListError/Code/emptyTitle``,
    ///   ``DownloadListError/Code/titleCountMismatch`` (fewer titles than groups).
    /// - Returns: the inserted sections (``ListChange/insertedSections``).
    /// - Complexity: O(k + sections × groups).
    @discardableResult
    public mutating func insert(
        sections groups: [[ListItem]],
        titles: [String],
        atSection section: Int
    ) throws(DownloadListError) -> ListChange {
        try checkManualMode("inserting sections")
        try checkNewSection(section)
        guard titles.count >= groups.count else {
            throw DownloadListError(
                .titleCountMismatch,
                "\(groups.count) sections need \(groups.count) titles, got \(titles.count)"
            )
        }
        for title in titles.prefix(groups.count) { try checkTitle(title) }
        var change = ListChange()
        var next = section
        for (group, title) in zip(groups, titles) {
            let slots = allocateNew(group)
            guard !slots.isEmpty else { continue }
            _ = insertSection(at: next, title: title, rank: 0)
            sections[next].members = slots
            renumberMembers(ofSectionAt: next, from: 0)
            change.insertedSections.append(next)
            next += 1
        }
        return change
    }

    /// Inserts tasks at a location in manual mode, in the order given (SDE's
    /// `download(_:inManualModeAt:)`).
    ///
    /// Items already in the list or the trash, or repeated, are skipped.
    ///
    /// - Parameter items: the tasks to insert, in order.
    /// - Parameter indexPath: an existing section, and an item in `0 ... taskCount` of it.
    /// - Throws: ``DownloadListError/Code/requiresManualMode``,
    ///   ``DownloadListError/Code/indexPathOutOfBounds``.
    /// - Returns: the inserted items.
    /// - Complexity: O(k + tasks after the location in its section).
    @discardableResult
    public mutating func insert(
        _ items: [ListItem],
        at indexPath: ListIndexPath
    ) throws(DownloadListError) -> ListChange {
        try checkManualMode("inserting at an index path")
        try checkInsertionPoint(indexPath)
        let slots = allocateNew(items)
        return insertManually(slots, at: indexPath)
    }

    /// Inserts detached slots at a checked manual-mode location.
    mutating func insertManually(_ slots: [Slot], at indexPath: ListIndexPath) -> ListChange {
        var change = ListChange()
        guard !slots.isEmpty else { return change }
        sections[indexPath.section].members.insert(contentsOf: slots, at: indexPath.item)
        renumberMembers(ofSectionAt: indexPath.section, from: indexPath.item)
        change.insertedItems = (0..<slots.count).map {
            ListIndexPath(section: indexPath.section, item: indexPath.item + $0)
        }
        return change
    }

    func checkNewSection(_ section: Int) throws(DownloadListError) {
        guard section >= 0, section <= sections.count else {
            throw DownloadListError(
                .sectionOutOfBounds,
                "a new section can go at 0 ... \(sections.count), not \(section)"
            )
        }
    }

    func checkInsertionPoint(_ indexPath: ListIndexPath) throws(DownloadListError) {
        guard indexPath.section >= 0, indexPath.section < sections.count, indexPath.item >= 0,
            indexPath.item <= sections[indexPath.section].members.count
        else {
            throw DownloadListError(
                .indexPathOutOfBounds,
                "cannot insert at \(indexPath): the list has \(sections.count) sections"
                    + (indexPath.section >= 0 && indexPath.section < sections.count
                        ? " and section \(indexPath.section) has \(sections[indexPath.section].members.count) tasks"
                        : "")
            )
        }
    }
}
