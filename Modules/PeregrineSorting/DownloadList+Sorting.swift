/// Sorting: the predefined types, the sectioning options and the custom trait sort.
extension DownloadList {
    /// Sorts the list by a predefined type, or switches to manual mode.
    ///
    /// - manual → predefined: section titles are dropped and the list is sorted.
    /// - predefined → manual: all tasks, in their shown order, are merged into one section titled
    ///   ``placeholderTitle`` (no section when the list is empty); `order` is ignored.
    /// - manual → manual: nothing happens.
    /// - predefined → predefined (or the same type again): the list is sorted, and the add-time
    ///   groups are computed anew from ``clock``.
    ///
    /// - Returns: ``ListChange/reload`` (or an empty change for manual → manual).
    /// - Complexity: O(n log n); O(n) to switch to manual.
    @discardableResult
    public mutating func sortListBy(type: ListSortType, order: ListSortOrder = .ascending) -> ListChange {
        if type == .manual {
            guard sortType != .manual else { return ListChange() }
            var all: [Slot] = []
            all.reserveCapacity(count)
            for shown in 0..<sections.count {
                let members = sections[shownSection(shown)].members
                if reversesRows { all.append(contentsOf: members.reversed()) } else { all.append(contentsOf: members) }
            }
            sortType = .manual
            addTimeGrouping = nil
            replaceSections(with: all.isEmpty ? [] : [(Self.placeholderTitle, 0, all)])
            return .reload
        }
        sortType = type
        sortOrder = order
        rebuildPredefined()
        return .reload
    }

    /// Sorts the list again with its current settings, recomputing the add-time groups (call it
    /// when the day changes). Does nothing in manual mode.
    ///
    /// - Returns: ``ListChange/reload``, or an empty change in manual mode.
    /// - Complexity: O(n log n).
    @discardableResult
    public mutating func sortAgain() -> ListChange {
        guard sortType != .manual else { return ListChange() }
        rebuildPredefined()
        return .reload
    }

    /// Changes which predefined types are sectioned, and sorts again when the current type is
    /// affected.
    ///
    /// - Returns: ``ListChange/reload`` when the list was sorted again, else an empty change.
    /// - Complexity: O(n log n) when the current type is affected, else O(1).
    @discardableResult
    public mutating func setSectioning(_ options: ListSectioning) -> ListChange {
        let wasSectioned = isSectioned
        sectioning = options
        guard sortType != .manual, sortType != .fileType, wasSectioned != isSectioned else { return ListChange() }
        rebuildPredefined()
        return .reload
    }

    /// SDEDownloadManager's `sectioningAddTimeList`: whether addTime is split into add-time groups.
    public var sectioningAddTimeList: Bool { sectioning.contains(.addTime) }
    /// SDEDownloadManager's `sectioningFileSizeList`: whether fileSize is split into size groups.
    public var sectioningFileSizeList: Bool { sectioning.contains(.fileSize) }
    /// SDEDownloadManager's `indexingFileNameList`: whether fileName is split into an A–Z + "#" index.
    public var indexingFileNameList: Bool { sectioning.contains(.fileNameIndex) }

    /// Sorts the list with the caller's predicates into sections by a trait, and switches to
    /// manual mode (SDEDownloadManager's `sortListBy(order:taskTrait:traitAscending:taskAscending:)`).
    ///
    /// - Tasks with the same trait share a section titled by the trait. Tasks whose trait is nil
    ///   or empty go to a last section titled ``placeholderTitle`` (last in both orders). Without
    ///   `taskTrait`, all tasks share one section titled ``placeholderTitle``.
    /// - Sections are ordered by `traitAscending`, or alphabetically when it is nil: by
    ///   `String`'s `<` (Unicode order), which gives the seed's documented example
    ///   `["Last 30 Days", "Last 7 Days", "Older", "Today", "Yesterday"]`.
    /// - Tasks inside a section are ordered by `taskAscending`.
    /// - `.descending` reverses both the sections (but the trait-less one stays last) and the
    ///   tasks in them.
    ///
    /// Each closure is called synchronously: `taskTrait` once per task.
    ///
    /// - Throws: ``DownloadListError/Code/inconsistentOrdering`` when a predicate is not a strict
    ///   weak ordering and its own result shows it (two neighbours out of order under it, as
    ///   `<=` gives for equal tasks). The list is then unchanged. A predicate inconsistent in a
    ///   way that goes unseen still yields a permutation of the tasks, never a lost one.
    /// - Returns: ``ListChange/reload``.
    /// - Complexity: O(n log n) calls of the predicates.
    @discardableResult
    public mutating func sortListBy(
        order: ListSortOrder,
        taskTrait: ((ListItem) -> String?)? = nil,
        traitAscending: ((String, String) -> Bool)? = nil,
        taskAscending: (ListItem, ListItem) -> Bool
    ) throws(DownloadListError) -> ListChange {
        var all: [Slot] = []
        all.reserveCapacity(count)
        for shown in 0..<sections.count {
            let members = sections[shownSection(shown)].members
            if reversesRows { all.append(contentsOf: members.reversed()) } else { all.append(contentsOf: members) }
        }

        var traits: [String] = []
        var groups: [[Slot]] = []
        var untraited: [Slot] = []
        if let taskTrait {
            var groupByTrait: [String: Int] = [:]
            for slot in all {
                guard let trait = taskTrait(entries[Int(slot)].item), !trait.isEmpty else {
                    untraited.append(slot)
                    continue
                }
                if let group = groupByTrait[trait] {
                    groups[group].append(slot)
                } else {
                    groupByTrait[trait] = groups.count
                    traits.append(trait)
                    groups.append([slot])
                }
            }
        } else {
            untraited = all
        }

        // Order the traits (carrying their groups), then check the predicate against its result.
        var traitOrder = Array(traits.indices)
        if let traitAscending {
            traitOrder.sort { traitAscending(traits[$0], traits[$1]) }
            for (a, b) in zip(traitOrder, traitOrder.dropFirst()) where traitAscending(traits[b], traits[a]) {
                throw DownloadListError(
                    .inconsistentOrdering,
                    "traitAscending is not a strict weak ordering: it put \"\(traits[a])\" before "
                        + "\"\(traits[b])\" but also says \"\(traits[b])\" comes first"
                )
            }
        } else {
            traitOrder.sort { traits[$0] < traits[$1] }
        }

        func itemAt(_ slot: Slot) -> ListItem { entries[Int(slot)].item }
        func sortTasks(_ slots: inout [Slot]) throws(DownloadListError) {
            slots.sort { taskAscending(itemAt($0), itemAt($1)) }
            for (a, b) in zip(slots, slots.dropFirst()) where taskAscending(itemAt(b), itemAt(a)) {
                throw DownloadListError(
                    .inconsistentOrdering,
                    "taskAscending is not a strict weak ordering: it put \(itemAt(a).url) before "
                        + "\(itemAt(b).url) but also says \(itemAt(b).url) comes first"
                )
            }
        }

        var newSections: [(title: String, rank: Int, members: [Slot])] = []
        for group in traitOrder {
            var members = groups[group]
            try sortTasks(&members)
            newSections.append((traits[group], 0, members))
        }
        if !untraited.isEmpty {
            try sortTasks(&untraited)
            newSections.append((Self.placeholderTitle, 0, untraited))
        }
        if order == .descending {
            let traited = newSections.count - (untraited.isEmpty ? 0 : 1)
            newSections[..<traited].reverse()
            for index in newSections.indices { newSections[index].members.reverse() }
        }

        sortType = .manual
        addTimeGrouping = nil
        replaceSections(with: newSections)
        return .reload
    }
}
