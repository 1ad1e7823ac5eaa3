#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Saving and restoring the list through the store.
extension DownloadList {
    /// Everything needed to restore the list exactly: sections, titles, trash, sort settings.
    /// Complexity: O(n).
    public var state: DownloadListState {
        DownloadListState(
            sections: downloadList,
            sectionTitles: sectionTitles,
            toDeleteList: toDeleteList,
            sortType: sortType,
            sortOrder: sortOrder,
            sectioning: sectioning,
            addTimeReference: addTimeGrouping?.reference
        )
    }

    /// Restores a saved list with the tasks' attributes.
    ///
    /// The list comes back exactly as saved, add-time groups included (they are made anew at
    /// the next sort, or when a task is placed on a later day). If a predefined list no longer
    /// matches its items' attributes (a size was updated after the list was saved), it is
    /// sorted again instead.
    ///
    /// - Parameters:
    ///   - state: what ``state`` returned.
    ///   - items: the attributes of every task in `state`, list and trash, and of no other.
    ///   - clock: as in ``init(sortType:sortOrder:sectioning:clock:calendar:)``.
    ///   - calendar: as in ``init(sortType:sortOrder:sectioning:clock:calendar:)``.
    /// - Throws: ``DownloadListError/Code/invalidState`` when a URL appears twice, a URL has no
    ///   item or an item no URL (nothing is silently dropped), titles and sections differ in
    ///   number, a manual title is empty or a predefined section is empty.
    /// - Complexity: O(n), or O(n log n) when the list must be sorted again.
    public init(
        restoring state: DownloadListState,
        items: [ListItem],
        clock: @escaping @Sendable () -> Date = { Date() },
        calendar: Calendar = Calendar(identifier: .gregorian)
    ) throws(DownloadListError) {
        self.init(
            sortType: state.sortType,
            sortOrder: state.sortOrder,
            sectioning: state.sectioning,
            clock: clock,
            calendar: calendar
        )
        func invalid(_ message: String) -> DownloadListError { DownloadListError(.invalidState, message) }

        guard state.sections.count == state.sectionTitles.count else {
            throw invalid("\(state.sections.count) sections but \(state.sectionTitles.count) titles")
        }
        var itemByURL: [String: ListItem] = [:]
        itemByURL.reserveCapacity(items.count)
        for item in items {
            guard itemByURL.updateValue(item, forKey: item.url) == nil else {
                throw invalid("two items for \(item.url)")
            }
        }
        func take(_ url: String) throws(DownloadListError) -> Slot {
            guard slotByURL[url] == nil else { throw invalid("\(url) is listed twice") }
            guard let item = itemByURL[url] else { throw invalid("\(url) is listed but has no item") }
            return allocate(item)
        }

        var newSections: [(title: String, rank: Int, members: [Slot])] = []
        for (urls, title) in zip(state.sections, state.sectionTitles) {
            if state.sortType == .manual {
                guard !title.isEmpty else { throw invalid("a manual section has an empty title") }
            } else {
                guard !urls.isEmpty else { throw invalid("section \"\(title)\" of a predefined sort is empty") }
            }
            var members: [Slot] = []
            members.reserveCapacity(urls.count)
            for url in urls { members.append(try take(url)) }
            if reversesRows { members.reverse() }
            newSections.append((title, 0, members))
        }
        if reversesSections { newSections.reverse() }
        var trashed: [Slot] = []
        for url in state.toDeleteList.reversed() { trashed.append(try take(url)) }
        guard slotByURL.count == itemByURL.count else {
            let unlisted = itemByURL.keys.first { slotByURL[$0] == nil } ?? ""
            throw invalid("\(itemByURL.count - slotByURL.count) items are in no list, e.g. \(unlisted)")
        }

        replaceSections(with: newSections)
        // Additions are numbered in ascending order, whatever order the list is shown in, so
        // that tasks added together keep their order when sorted again.
        nextSequence = 0
        for section in sections {
            for slot in section.members {
                nextSequence += 1
                entries[Int(slot)].sequence = nextSequence
            }
        }
        for slot in trashed {
            nextSequence += 1
            entries[Int(slot)].sequence = nextSequence
        }
        for (position, slot) in trashed.enumerated() {
            entries[Int(slot)].section = Self.inTrash
            entries[Int(slot)].position = Int32(position)
        }
        trash = trashed
        guard sortType != .manual else { return }
        if sortType == .addTime, sectioning.contains(.addTime), let reference = state.addTimeReference {
            addTimeGrouping = AddTimeGrouping(now: reference, calendar: calendar)
        }
        if !restoredOrderHolds() { rebuildPredefined() }
    }

    /// Whether every predefined section holds one group, titled as the sort titles it, in
    /// ascending group order, with its tasks in order. Sets the sections' ranks. Complexity: O(n).
    mutating func restoredOrderHolds() -> Bool {
        if sortType == .addTime, sectioning.contains(.addTime), addTimeGrouping == nil { return false }
        var previousRank = -1
        for index in sections.indices {
            let members = sections[index].members
            let sectionRank = rank(ofSlot: members[0])
            guard sectionRank > previousRank, sections[index].title == title(ofRank: sectionRank) else { return false }
            sections[index].rank = sectionRank
            previousRank = sectionRank
            let type = sortType
            let holds = entries.withUnsafeBufferPointer { entries in
                for position in members.indices {
                    if self.rank(ofSlot: members[position]) != sectionRank { return false }
                    if position > 0,
                        !Self.precedes(Int(members[position - 1]), Int(members[position]), in: entries, by: type)
                    {
                        return false
                    }
                }
                return true
            }
            guard holds else { return false }
        }
        return true
    }
}
