/// Updating a task's attributes when its name, size, kind or time becomes known.
extension DownloadList {
    /// Replaces a task's attributes (found by its URL), in the list or the trash.
    ///
    /// In a predefined mode, a task whose sort attributes changed moves to where the sort puts
    /// it now (possibly into a new section, possibly emptying its old one); in manual mode and in
    /// the trash it stays where it is. The change does not list tasks whose row merely needs
    /// redrawing: the caller knows which tasks it updated.
    ///
    /// - Throws: ``DownloadListError/Code/unknownURL`` when the URL is in neither the list nor
    ///   the trash; nothing changes then.
    /// - Returns: the move (or deletion plus insertion across a new or vanished section), or
    ///   ``ListChange/reload`` when stale add-time groups made it sort everything again.
    /// - Complexity: O(1) when the task does not move, else O(log m + the tasks between its two
    ///   places) in sections of m tasks.
    @discardableResult
    public mutating func update(_ item: ListItem) throws(DownloadListError) -> ListChange {
        try update([item])
    }

    /// Replaces several tasks' attributes at once; see ``update(_:)-(ListItem)``. When a URL
    /// repeats, its last item wins.
    ///
    /// - Throws: ``DownloadListError/Code/unknownURL``; nothing changes then.
    /// - Complexity: O(k log k + the tasks after the first moved one in each touched section).
    @discardableResult
    public mutating func update(_ items: [ListItem]) throws(DownloadListError) -> ListChange {
        var latest: [Slot: ListItem] = [:]
        var order: [Slot] = []
        for item in items {
            guard let slot = slotByURL[item.url] else {
                throw DownloadListError(.unknownURL, "\(item.url) is in neither the download list nor the trash")
            }
            if latest.updateValue(item, forKey: slot) == nil { order.append(slot) }
        }
        var moving: [Slot] = []
        for slot in order {
            let item = latest[slot]!
            let old = entries[Int(slot)].item
            if entries[Int(slot)].section >= 0, sortAttributesDiffer(old, item) { moving.append(slot) }
            if old.fileName != item.fileName { entries[Int(slot)].nameKey = FileNameKey(item.fileName) }
            entries[Int(slot)].item = item
        }
        guard !moving.isEmpty else { return ListChange() }
        if addTimeGroupsAreStale {
            rebuildPredefined()
            return .reload
        }

        let oldShown = shownSectionIndexes()
        let old = moving.map { (path: indexPath(ofSlot: $0), section: entries[Int($0)].section) }
        detach(moving)
        let created = placePredefined(moving)
        let deleted = Set(removeEmptySections())
        let newShown = shownSectionIndexes()

        var change = ListChange()
        change.deletedSections = deleted.map { oldShown[$0]! }.sorted()
        change.insertedSections = created.map { newShown[$0]! }.sorted()
        for (slot, before) in zip(moving, old) {
            let after = indexPath(ofSlot: slot)
            let oldGone = deleted.contains(before.section)
            let newFresh = created.contains(entries[Int(slot)].section)
            switch (oldGone, newFresh) {
            case (true, true):
                break
            case (true, false):
                change.insertedItems.append(after)
            case (false, true):
                change.deletedItems.append(before.path)
            case (false, false):
                // A lone task back in its place moved nothing; in a batch every re-placed task is
                // listed, because the others may have passed it.
                if moving.count > 1 || before.path != after {
                    change.movedItems.append(ListChange.Move(from: before.path, to: after))
                }
            }
        }
        change.insertedItems.sort()
        change.deletedItems.sort()
        return change
    }
}
