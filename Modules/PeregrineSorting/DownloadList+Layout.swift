import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The internal machinery of ``DownloadList``: slots, sections, ranks, the predefined order,
/// sorting everything and placing a few.
extension DownloadList {
    // MARK: - Slots

    /// Stores a new entry, detached, and returns its slot. Complexity: O(1) amortized.
    mutating func allocate(_ item: ListItem) -> Slot {
        nextSequence += 1
        let entry = Entry(
            item: item, nameKey: FileNameKey(item.fileName), section: Self.detached, position: 0,
            sequence: nextSequence)
        let slot: Slot
        if let reused = freeSlots.popLast() {
            slot = reused
            entries[Int(slot)] = entry
        } else {
            slot = Slot(entries.count)
            entries.append(entry)
        }
        slotByURL[item.url] = slot
        return slot
    }

    /// Forgets a detached or trashed entry. Complexity: O(1).
    mutating func release(_ slot: Slot) {
        slotByURL[entries[Int(slot)].item.url] = nil
        entries[Int(slot)].section = Self.free
        entries[Int(slot)].item.fileName = ""
        entries[Int(slot)].item.url = ""
        freeSlots.append(slot)
    }

    /// Allocates the items whose URLs are new (in neither the list nor the trash, nor earlier
    /// in `items`). Complexity: O(k).
    mutating func allocateNew(_ items: [ListItem]) -> [Slot] {
        var slots: [Slot] = []
        slots.reserveCapacity(items.count)
        for item in items where slotByURL[item.url] == nil {
            slots.append(allocate(item))
        }
        return slots
    }

    // MARK: - Sections

    /// Inserts an empty section at a storage index and returns its id. Complexity: O(sections).
    mutating func insertSection(at index: Int, title: String, rank: Int) -> Int32 {
        let id: Int32
        if let reused = freeSectionIDs.popLast() {
            id = reused
        } else {
            id = Int32(sectionIndexByID.count)
            sectionIndexByID.append(-1)
        }
        sections.insert(Section(id: id, title: title, rank: rank, members: []), at: index)
        renumberSections(from: index)
        return id
    }

    /// Removes the section at a storage index (its members must have been detached).
    /// Complexity: O(sections).
    mutating func removeSection(atStorageIndex index: Int) {
        let id = sections[index].id
        sections.remove(at: index)
        sectionIndexByID[Int(id)] = -1
        freeSectionIDs.append(id)
        renumberSections(from: index)
    }

    mutating func renumberSections(from index: Int) {
        for position in index..<sections.count {
            sectionIndexByID[Int(sections[position].id)] = Int32(position)
        }
    }

    /// Records each member's section and position from `start` on. Complexity: O(members − start).
    mutating func renumberMembers(ofSectionAt index: Int, from start: Int) {
        let id = sections[index].id
        sections[index].members.withUnsafeBufferPointer { members in
            for position in start..<members.count {
                let slot = Int(members[position])
                entries[slot].section = id
                entries[slot].position = Int32(position)
            }
        }
    }

    /// Replaces every section: ids are renumbered from 0. Complexity: O(n).
    mutating func replaceSections(with newSections: [(title: String, rank: Int, members: [Slot])]) {
        sections = []
        sections.reserveCapacity(newSections.count)
        sectionIndexByID = []
        freeSectionIDs = []
        for (index, section) in newSections.enumerated() {
            sections.append(
                Section(id: Int32(index), title: section.title, rank: section.rank, members: section.members))
            sectionIndexByID.append(Int32(index))
            renumberMembers(ofSectionAt: index, from: 0)
        }
    }

    /// Takes slots out of their sections, keeping the sections (even when emptied).
    /// Complexity: O(k + the members after the first removed one in each touched section).
    mutating func detach(_ slots: [Slot]) {
        var positionsBySection: [Int32: [Int32]] = [:]
        for slot in slots {
            let entry = entries[Int(slot)]
            positionsBySection[entry.section, default: []].append(entry.position)
            entries[Int(slot)].section = Self.detached
        }
        for (id, positions) in positionsBySection {
            let index = Int(sectionIndexByID[Int(id)])
            if positions.count == 1 {
                let position = Int(positions[0])
                sections[index].members.remove(at: position)
                renumberMembers(ofSectionAt: index, from: position)
                continue
            }
            let sorted = positions.sorted()
            let first = Int(sorted[0])
            var kept: [Slot] = []
            var next = 0
            let members = sections[index].members
            kept.reserveCapacity(members.count - first - sorted.count)
            for position in first..<members.count {
                if next < sorted.count, Int(sorted[next]) == position {
                    next += 1
                } else {
                    kept.append(members[position])
                }
            }
            sections[index].members.replaceSubrange(first..., with: kept)
            renumberMembers(ofSectionAt: index, from: first)
        }
    }

    /// Removes the empty sections (predefined modes) and returns their ids.
    /// Complexity: O(sections²) at worst; sections are few in a predefined mode.
    mutating func removeEmptySections() -> [Int32] {
        var removed: [Int32] = []
        var index = 0
        while index < sections.count {
            if sections[index].members.isEmpty {
                removed.append(sections[index].id)
                removeSection(atStorageIndex: index)
            } else {
                index += 1
            }
        }
        return removed
    }

    /// Shown index of every section, by id. Complexity: O(sections).
    func shownSectionIndexes() -> [Int32: Int] {
        var indexes: [Int32: Int] = [:]
        for (index, section) in sections.enumerated() { indexes[section.id] = shownSection(index) }
        return indexes
    }

    // MARK: - Ranks and titles

    /// Whether the current predefined type is split into groups.
    var isSectioned: Bool {
        switch sortType {
        case .manual: false
        case .addTime: sectioning.contains(.addTime)
        case .fileName: sectioning.contains(.fileNameIndex)
        case .fileSize: sectioning.contains(.fileSize)
        case .fileType: true
        }
    }

    static let kindOrder: [FileKind] = [.image, .audio, .video, .document, .other]

    static func kindRank(_ kind: FileKind) -> Int {
        switch kind {
        case .image: 0
        case .audio: 1
        case .video: 2
        case .document: 3
        case .other: 4
        }
    }

    /// The group of a slot under the current predefined settings. Complexity: O(1).
    func rank(ofSlot slot: Slot) -> Int {
        guard isSectioned else { return 0 }
        let index = Int(slot)
        switch sortType {
        case .manual: return 0
        case .addTime: return (addTimeGrouping?.group(of: entries[index].item.addTime) ?? .today).rawValue
        case .fileName: return Int(entries[index].nameKey.indexRank)
        case .fileSize: return FileSizeGroup(size: entries[index].item.fileSize).rawValue
        case .fileType: return Self.kindRank(entries[index].item.kind)
        }
    }

    /// The title of a predefined section. Complexity: O(1).
    func title(ofRank rank: Int) -> String {
        guard isSectioned else {
            switch sortType {
            case .addTime: return "Sorted by Add Time"
            case .fileName: return "Sorted by File Name"
            case .fileSize: return "Sorted by File Size"
            case .fileType, .manual: return Self.placeholderTitle
            }
        }
        switch sortType {
        case .manual: return Self.placeholderTitle
        case .addTime: return AddTimeGroup(rawValue: rank)?.title ?? Self.placeholderTitle
        case .fileName: return FileNameKey.indexTitle(rank: rank)
        case .fileSize: return FileSizeGroup(rawValue: rank)?.title ?? Self.placeholderTitle
        case .fileType: return Self.kindOrder[rank].rawValue
        }
    }

    /// The number of ranks of the current type.
    var rankCount: Int {
        guard isSectioned else { return 1 }
        switch sortType {
        case .manual: return 1
        case .addTime: return AddTimeGroup.allCases.count
        case .fileName: return FileNameKey.indexSectionCount
        case .fileSize: return FileSizeGroup.allCases.count
        case .fileType: return Self.kindOrder.count
        }
    }

    // MARK: - The predefined order

    /// An add time as an integer with the same order (-0 as +0, NaN first), so that the full
    /// comparison and the sort records agree.
    @inline(__always)
    static func timeKey(_ date: Date) -> UInt64 {
        let seconds = date.timeIntervalSinceReferenceDate
        if seconds.isNaN { return 0 }
        let bits = (seconds == 0 ? 0 : seconds).bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    /// A size as an unsigned integer with the same order.
    @inline(__always)
    static func sizeKey(_ size: Int64) -> UInt64 { UInt64(bitPattern: size) ^ (1 << 63) }

    /// Whether slot `a` comes before slot `b` in ascending order of a predefined type. A strict
    /// total order: the order of addition breaks a tie of times added, the URL every other.
    /// Reads fields in place (no entry is copied).
    /// Complexity: O(1) usually.
    @inline(__always)
    static func precedes(_ a: Int, _ b: Int, in entries: UnsafeBufferPointer<Entry>, by type: ListSortType) -> Bool {
        switch type {
        case .addTime, .manual:
            let (x, y) = (timeKey(entries[a].item.addTime), timeKey(entries[b].item.addTime))
            if x != y { return x < y }
            if entries[a].sequence != entries[b].sequence { return entries[a].sequence < entries[b].sequence }
        case .fileName, .fileType:
            let order = FileNameKey.compare(entries[a].nameKey, entries[b].nameKey)
            if order != 0 { return order < 0 }
            if entries[a].item.fileSize != entries[b].item.fileSize {
                return entries[a].item.fileSize < entries[b].item.fileSize
            }
            let names = byteOrder(entries[a].item.fileName, entries[b].item.fileName)
            if names != 0 { return names < 0 }
        case .fileSize:
            if entries[a].item.fileSize != entries[b].item.fileSize {
                return entries[a].item.fileSize < entries[b].item.fileSize
            }
            let order = FileNameKey.compare(entries[a].nameKey, entries[b].nameKey)
            if order != 0 { return order < 0 }
            let names = byteOrder(entries[a].item.fileName, entries[b].item.fileName)
            if names != 0 { return names < 0 }
        }
        return byteOrder(entries[a].item.url, entries[b].item.url) < 0
    }

    /// -1, 0 or 1 by UTF-8 bytes: a total order without the cost of Unicode normalization. Two
    /// different URL keys are never canonically equivalent (they would be one dictionary key),
    /// so this orders every pair of tasks strictly. Complexity: O(length).
    @inline(__always)
    static func byteOrder(_ a: String, _ b: String) -> Int {
        var a = a
        var b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                var index = 0
                while index < common {
                    if x[index] != y[index] { return x[index] < y[index] ? -1 : 1 }
                    index += 1
                }
                return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
            }
        }
    }

    /// What a sort compares first, in plain integers: most comparisons end without touching an
    /// entry. Agrees with ``precedes(_:_:in:by:)``, which decides ties.
    struct SortRecord {
        var first: UInt64
        var second: UInt64
        var third: UInt64
        var slot: Int32
    }

    /// The sort record of a slot under a type.
    @inline(__always)
    static func record(of slot: Slot, in entries: UnsafeBufferPointer<Entry>, by type: ListSortType) -> SortRecord {
        let index = Int(slot)
        switch type {
        case .addTime, .manual:
            return SortRecord(
                first: timeKey(entries[index].item.addTime), second: entries[index].sequence, third: 0, slot: slot)
        case .fileName, .fileType:
            return SortRecord(
                first: entries[index].nameKey.prefix,
                second: entries[index].nameKey.prefix2,
                third: entries[index].nameKey.prefix3,
                slot: slot
            )
        case .fileSize:
            return SortRecord(
                first: sizeKey(entries[index].item.fileSize),
                second: entries[index].nameKey.prefix,
                third: entries[index].nameKey.prefix2,
                slot: slot
            )
        }
    }

    /// Sorts records ascending and returns their slots. Complexity: O(k log k).
    ///
    /// Records are compared as plain integers; runs that tie are refined with the next units of
    /// their name keys, again as integers (a most-significant-digit-first sort), so that entries
    /// and key arrays, scattered in memory, are read once per tied record and level instead of
    /// once per comparison. Runs whose keys are wholly equal fall back to
    /// ``precedes(_:_:in:by:)``.
    static func sortedSlots(
        _ records: inout [SortRecord], in entries: UnsafeBufferPointer<Entry>, by type: ListSortType
    ) -> [Slot] {
        records.sort(by: recordPrecedes)
        // The name units the records hold: 0 ..< 9 for a name sort, 0 ..< 6 for a size sort.
        let depth = type == .fileSize ? 6 : 9
        refineTies(&records[...], depth: depth, in: entries, by: type)
        return records.map(\.slot)
    }

    @inline(__always)
    static func recordPrecedes(_ a: SortRecord, _ b: SortRecord) -> Bool {
        if a.first != b.first { return a.first < b.first }
        if a.second != b.second { return a.second < b.second }
        return a.third < b.third
    }

    /// Orders each run of equal records in a sorted range, looking at name units from `depth` on.
    static func refineTies(
        _ records: inout ArraySlice<SortRecord>,
        depth: Int,
        in entries: UnsafeBufferPointer<Entry>,
        by type: ListSortType
    ) {
        var start = records.startIndex
        while start < records.endIndex {
            var end = start + 1
            let head = records[start]
            while end < records.endIndex, records[end].first == head.first, records[end].second == head.second,
                records[end].third == head.third
            {
                end += 1
            }
            if end - start > 1 { resolve(&records[start..<end], depth: depth, in: entries, by: type) }
            start = end
        }
    }

    /// Orders a run of records that tie on everything seen so far.
    static func resolve(
        _ run: inout ArraySlice<SortRecord>,
        depth: Int,
        in entries: UnsafeBufferPointer<Entry>,
        by type: ListSortType
    ) {
        if type != .addTime, type != .manual {
            var anyUnits = false
            let isSize = type == .fileSize
            for index in run.indices {
                let chunks = entries[Int(run[index].slot)].nameKey.packedChunks(from: depth, count: isSize ? 2 : 3)
                anyUnits = anyUnits || chunks.0 != 0
                if isSize {
                    run[index].second = chunks.0
                    run[index].third = chunks.1
                } else {
                    run[index].first = chunks.0
                    run[index].second = chunks.1
                    run[index].third = chunks.2
                }
            }
            // Units are never 0, so all-zero chunks mean every key ended: the keys are equal.
            if anyUnits {
                run.sort(by: recordPrecedes)
                refineTies(&run, depth: depth + (type == .fileSize ? 6 : 9), in: entries, by: type)
                return
            }
        }
        run.sort { precedes(Int($0.slot), Int($1.slot), in: entries, by: type) }
    }

    /// Sorts slots ascending under the current type. Complexity: O(k log k).
    func sortAscending(_ slots: inout [Slot]) {
        guard slots.count > 1 else { return }
        let type = sortType
        slots = entries.withUnsafeBufferPointer { entries in
            var records = slots.map { Self.record(of: $0, in: entries, by: type) }
            return Self.sortedSlots(&records, in: entries, by: type)
        }
    }

    /// Whether the current sort attributes of two items may differ (then a re-placement is due).
    func sortAttributesDiffer(_ old: ListItem, _ new: ListItem) -> Bool {
        switch sortType {
        case .manual: false
        case .addTime: old.addTime != new.addTime
        case .fileName, .fileSize: old.fileName != new.fileName || old.fileSize != new.fileSize
        case .fileType: old.fileName != new.fileName || old.fileSize != new.fileSize || old.kind != new.kind
        }
    }

    // MARK: - Sorting everything

    /// Sorts every task of the list, and the detached slots being added, under the current
    /// predefined settings, recomputing the add-time groups. Complexity: O(n log n).
    mutating func rebuildPredefined() {
        if sortType == .addTime, sectioning.contains(.addTime) {
            addTimeGrouping = AddTimeGrouping(now: clock(), calendar: calendar)
        } else {
            addTimeGrouping = nil
        }
        let ranks = rankCount
        let type = sortType
        // Every entry in a section, or detached to be added: read in storage order, which is
        // kinder to the cache than section order.
        var buckets = [[SortRecord]](repeating: [], count: ranks)
        if ranks == 1 { buckets[0].reserveCapacity(count) }
        entries.withUnsafeBufferPointer { entries in
            for index in entries.indices {
                let section = entries[index].section
                guard section >= 0 || section == Self.detached else { continue }
                let slot = Slot(index)
                buckets[ranks == 1 ? 0 : rank(ofSlot: slot)].append(Self.record(of: slot, in: entries, by: type))
            }
        }
        var newSections: [(title: String, rank: Int, members: [Slot])] = []
        for rank in 0..<ranks where !buckets[rank].isEmpty {
            let members = entries.withUnsafeBufferPointer { Self.sortedSlots(&buckets[rank], in: $0, by: type) }
            newSections.append((title(ofRank: rank), rank, members))
        }
        replaceSections(with: newSections)
    }

    /// Whether the add-time sections were made on another day than the clock's today.
    /// Complexity: O(1), no calendar call while the clock stays in the grouping's day.
    var addTimeGroupsAreStale: Bool {
        guard sortType == .addTime, sectioning.contains(.addTime) else { return false }
        guard let grouping = addTimeGrouping else { return true }
        let now = clock()
        if grouping.contains(now) { return false }
        return !grouping.hasSameBoundaries(as: AddTimeGrouping(now: now, calendar: calendar))
    }

    // MARK: - Placing a few

    /// Places detached slots where the predefined order puts them, creating sections as
    /// needed; returns the ids of the new sections. Sections must already be sorted.
    /// Complexity: O(k log k + the members after the first placed one in each touched section).
    mutating func placePredefined(_ slots: [Slot]) -> Set<Int32> {
        var byRank: [Int: [Slot]] = [:]
        for slot in slots { byRank[rank(ofSlot: slot), default: []].append(slot) }
        var created: Set<Int32> = []
        for (rank, group) in byRank {
            var newcomers = group
            sortAscending(&newcomers)
            let index = sections.firstIndex { $0.rank >= rank } ?? sections.count
            if index == sections.count || sections[index].rank != rank {
                created.insert(insertSection(at: index, title: title(ofRank: rank), rank: rank))
            }
            merge(newcomers, intoSectionAt: index)
        }
        return created
    }

    /// Merges sorted detached slots into a sorted section. Complexity: O(k + members after the
    /// first newcomer's place); O(k) when they all go at the end.
    mutating func merge(_ newcomers: [Slot], intoSectionAt index: Int) {
        let type = sortType
        let members = sections[index].members
        let start: Int = entries.withUnsafeBufferPointer { entries in
            // Lower bound of the first newcomer: everything before it stays where it is.
            let first = Int(newcomers[0])
            var low = 0
            var high = members.count
            while low < high {
                let middle = (low + high) / 2
                if Self.precedes(Int(members[middle]), first, in: entries, by: type) {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            return low
        }
        if start == members.count {
            sections[index].members.append(contentsOf: newcomers)
        } else {
            var merged: [Slot] = []
            merged.reserveCapacity(members.count - start + newcomers.count)
            entries.withUnsafeBufferPointer { entries in
                var old = start
                var new = 0
                while old < members.count, new < newcomers.count {
                    if Self.precedes(Int(newcomers[new]), Int(members[old]), in: entries, by: type) {
                        merged.append(newcomers[new])
                        new += 1
                    } else {
                        merged.append(members[old])
                        old += 1
                    }
                }
                merged.append(contentsOf: members[old...])
                merged.append(contentsOf: newcomers[new...])
            }
            sections[index].members.replaceSubrange(start..., with: merged)
        }
        renumberMembers(ofSectionAt: index, from: start)
    }

    /// Puts detached slots into the trash so that the first of them is shown first.
    /// Returns the shown trash indexes they got. Complexity: O(k).
    mutating func appendToTrash(_ slots: [Slot]) -> [Int] {
        for slot in slots.reversed() {
            entries[Int(slot)].section = Self.inTrash
            entries[Int(slot)].position = Int32(trash.count)
            trash.append(slot)
        }
        return Array(0..<slots.count)
    }

    /// Takes slots out of the trash and returns their old shown trash indexes, ascending.
    /// Complexity: O(trash).
    mutating func detachFromTrash(_ slots: [Slot]) -> [Int] {
        var removing = Set<Slot>(minimumCapacity: slots.count)
        var shown: [Int] = []
        for slot in slots {
            removing.insert(slot)
            shown.append(trashIndex(ofSlot: slot))
            entries[Int(slot)].section = Self.detached
        }
        trash.removeAll { removing.contains($0) }
        for (position, slot) in trash.enumerated() { entries[Int(slot)].position = Int32(position) }
        return shown.sorted()
    }
}
