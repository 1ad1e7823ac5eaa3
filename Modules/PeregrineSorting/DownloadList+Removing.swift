/// Removing tasks, to the trash or for good, and the trash itself.
extension DownloadList {
    /// Removes tasks from the list, into the trash or for good (SDE's `deleteTasks(_:)`).
    ///
    /// In a predefined mode a section left empty disappears; in manual mode it stays. Tasks moved
    /// to the trash go to its head, in their order in the list.
    ///
    /// - Throws: ``DownloadListError/Code/unknownURL`` when any URL is not in the list (the trash
    ///   does not count); nothing is removed then. Repeated URLs count once.
    /// - Returns: the deleted items and sections, and the trash rows inserted.
    /// - Complexity: O(k + the tasks after the first removed one in each touched section).
    @discardableResult
    public mutating func remove(_ urls: [String], moveToTrash: Bool) throws(DownloadListError) -> ListChange {
        var slots: [Slot] = []
        var seen = Set<Slot>()
        for url in urls {
            guard let slot = slotByURL[url], entries[Int(slot)].section >= 0 else {
                throw DownloadListError(.unknownURL, "\(url) is not in the download list")
            }
            if seen.insert(slot).inserted { slots.append(slot) }
        }
        return removeSlots(slots, moveToTrash: moveToTrash)
    }

    /// Removes the tasks at locations, into the trash or for good (SDE's `deleteTasks(at:)`).
    ///
    /// - Throws: ``DownloadListError/Code/indexPathOutOfBounds`` when any location is out of
    ///   bounds; nothing is removed then. Repeated locations count once.
    /// - Returns: as ``remove(_:moveToTrash:)``.
    /// - Complexity: as ``remove(_:moveToTrash:)``.
    @discardableResult
    public mutating func remove(at indexPaths: [ListIndexPath], moveToTrash: Bool) throws(DownloadListError)
        -> ListChange
    {
        var slots: [Slot] = []
        var seen = Set<Slot>()
        for indexPath in indexPaths {
            guard let slot = slot(at: indexPath) else { throw outOfBounds(indexPath) }
            if seen.insert(slot).inserted { slots.append(slot) }
        }
        return removeSlots(slots, moveToTrash: moveToTrash)
    }

    /// Removes every task of a section (SDE's `deleteTasksInSection(_:)`). In manual mode the
    /// section stays, empty; in a predefined mode it disappears.
    ///
    /// - Throws: ``DownloadListError/Code/sectionOutOfBounds``.
    /// - Complexity: O(tasks in the section + sections).
    @discardableResult
    public mutating func removeTasks(inSection section: Int, moveToTrash: Bool) throws(DownloadListError) -> ListChange
    {
        try checkSection(section)
        return removeSlots(sections[shownSection(section)].members, moveToTrash: moveToTrash)
    }

    /// Removes every task of the list (SDE's `deleteAllTasks()`). Manual sections stay, empty.
    ///
    /// - Complexity: O(n).
    @discardableResult
    public mutating func removeAll(moveToTrash: Bool) -> ListChange {
        var slots: [Slot] = []
        slots.reserveCapacity(count)
        for shown in 0..<sections.count {
            let members = sections[shownSection(shown)].members
            slots.append(contentsOf: reversesRows ? members.reversed() : members)
        }
        return removeSlots(slots, moveToTrash: moveToTrash)
    }

    /// Removes slots that are in the list and describes it.
    mutating func removeSlots(_ slots: [Slot], moveToTrash: Bool) -> ListChange {
        var change = ListChange()
        guard !slots.isEmpty else { return change }
        // Manual sections never vanish, so only a predefined list needs their old places.
        let oldShown = sortType == .manual ? [:] : shownSectionIndexes()
        var old = slots.map { (slot: $0, path: indexPath(ofSlot: $0), section: entries[Int($0)].section) }
        old.sort { $0.path < $1.path }
        detach(slots)
        let deleted = sortType == .manual ? [] : removeEmptySections()
        let deletedSet = Set(deleted)
        change.deletedSections = deleted.map { oldShown[$0]! }.sorted()
        change.deletedItems = old.filter { !deletedSet.contains($0.section) }.map(\.path)
        if moveToTrash {
            change.insertedTrashIndexes = appendToTrash(old.map(\.slot))
        } else {
            for entry in old { release(entry.slot) }
        }
        return change
    }

    // MARK: - The trash

    /// Forgets tasks in the trash for good (SDE's `cleanupToDeleteTasks(_:)`).
    ///
    /// - Throws: ``DownloadListError/Code/unknownURL`` when any URL is not in the trash; nothing
    ///   is removed then.
    /// - Returns: the deleted trash rows.
    /// - Complexity: O(trash).
    @discardableResult
    public mutating func removeFromTrash(_ urls: [String]) throws(DownloadListError) -> ListChange {
        let slots = try trashSlots(urls)
        var change = ListChange()
        change.deletedTrashIndexes = detachFromTrash(slots)
        for slot in slots { release(slot) }
        return change
    }

    /// Forgets the tasks at trash rows for good (SDE's `cleanupToDeleteTasks(at:)`).
    ///
    /// - Throws: ``DownloadListError/Code/trashIndexOutOfBounds``.
    /// - Complexity: O(trash).
    @discardableResult
    public mutating func removeFromTrash(at indexes: [Int]) throws(DownloadListError) -> ListChange {
        try removeFromTrash(trashURLs(at: indexes))
    }

    /// Empties the trash (SDE's `emptyToDeleteList()`). Complexity: O(trash).
    @discardableResult
    public mutating func emptyTrash() -> ListChange {
        var change = ListChange()
        change.deletedTrashIndexes = Array(0..<trash.count)
        let slots = trash
        trash = []
        for slot in slots { release(slot) }
        return change
    }

    /// Puts tasks from the trash back in the list (SDE's `restoreToDeleteTasks(_:toLocation:)`).
    ///
    /// In manual mode they are inserted at `location`, in the order given; in a predefined mode
    /// the sort places them and `location` is ignored.
    ///
    /// - Parameter urls: the tasks to restore, by URL string.
    /// - Parameter location: in manual mode, an existing section and an item in
    ///   `0 ... taskCount` of it.
    /// - Throws: ``DownloadListError/Code/unknownURL`` when any URL is not in the trash;
    ///   ``DownloadListError/Code/indexPathOutOfBounds`` for a bad location in manual mode.
    ///   Nothing changes then. Repeated URLs count once.
    /// - Returns: the deleted trash rows and the inserted items (or a reload when the add-time
    ///   groups were stale).
    /// - Complexity: O(trash + k log k + the tasks after the first placed one in its section).
    @discardableResult
    public mutating func restoreFromTrash(
        _ urls: [String],
        to location: ListIndexPath = ListIndexPath(section: 0, item: 0)
    ) throws(DownloadListError) -> ListChange {
        let slots = try trashSlots(urls)
        if sortType == .manual { try checkInsertionPoint(location) }
        let deletedTrash = detachFromTrash(slots)
        var change = sortType == .manual ? insertManually(slots, at: location) : placeWithChange(slots)
        change.deletedTrashIndexes = deletedTrash
        return change
    }

    /// Puts the tasks at trash rows back in the list (SDE's `restoreToDeleteTasks(at:toLocation:)`).
    ///
    /// - Throws: ``DownloadListError/Code/trashIndexOutOfBounds``, and as
    ///   ``restoreFromTrash(_:to:)``.
    /// - Complexity: as ``restoreFromTrash(_:to:)``.
    @discardableResult
    public mutating func restoreFromTrash(
        at indexes: [Int],
        to location: ListIndexPath = ListIndexPath(section: 0, item: 0)
    ) throws(DownloadListError) -> ListChange {
        try restoreFromTrash(trashURLs(at: indexes), to: location)
    }

    /// The URL strings at trash rows. Complexity: O(k).
    public func trashURLs(at indexes: [Int]) throws(DownloadListError) -> [String] {
        try indexes.map { (index) throws(DownloadListError) -> String in
            guard index >= 0, index < trash.count else {
                throw DownloadListError(
                    .trashIndexOutOfBounds,
                    "trash row \(index) does not exist (the trash has \(trash.count))"
                )
            }
            return entries[Int(trash[trash.count - 1 - index])].item.url
        }
    }

    func trashSlots(_ urls: [String]) throws(DownloadListError) -> [Slot] {
        var slots: [Slot] = []
        var seen = Set<Slot>()
        for url in urls {
            guard let slot = slotByURL[url], entries[Int(slot)].section == Self.inTrash else {
                throw DownloadListError(.unknownURL, "\(url) is not in the trash")
            }
            if seen.insert(slot).inserted { slots.append(slot) }
        }
        return slots
    }
}
