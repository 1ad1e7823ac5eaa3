import PeregrineStorage

/// One list's order as stored: one row per URL, each with a position, sorted by position.
///
/// A `StoredList` arrives whole on every change; rewriting thousands of rows for one added or
/// moved task would make a list change cost O(n) rows. Positions leave gaps instead
/// (``spacing`` apart when written fresh), and ``change(to:)`` compares the new list with the
/// stored one: the rows of the common prefix and suffix stay, the old middle is deleted, the new
/// middle is inserted with positions spread in the gap between them. Only when a gap is used
/// up (about 20 halvings at one place) is the whole list written again with fresh gaps.
///
/// A pure value: tested without a database.
struct ListOrder: Sendable, Hashable {
    /// A row: where, in which section (``trashSection`` for the trash), which URL.
    struct Entry: Sendable, Hashable {
        var position: Int64
        var section: Int32
        var url: String
    }

    /// The section number of trash rows.
    static let trashSection: Int32 = -1
    /// The distance between the positions of a freshly written list.
    static let spacing: Int64 = 1 << 20

    /// The rows, by position.
    private(set) var entries: [Entry]

    /// An order made of rows read from the database, sorted by position.
    init(entries: [Entry]) {
        self.entries = entries
    }

    /// The rows of a list written fresh.
    init(list: StoredList) {
        let items = Self.items(of: list)
        entries = items.enumerated().map {
            Entry(position: Int64($0.offset) * Self.spacing, section: $0.element.0, url: $0.element.1)
        }
    }

    /// What to write to go from the stored order to a list's.
    struct Change: Sendable, Hashable {
        /// Delete the rows with positions in this range (inclusive), when set.
        var deleted: ClosedRange<Int64>?
        /// Insert these rows.
        var inserted: [Entry]
        /// Delete every row of the list first (the gaps ran out; ``inserted`` holds all rows).
        var rewritesAll: Bool

        /// Whether nothing changes.
        var isEmpty: Bool { deleted == nil && inserted.isEmpty && !rewritesAll }
        /// How many rows the change writes or deletes (what the list change costs).
        var rowsTouched: Int
    }

    /// The change from this order to `list`'s, and the order after it.
    func change(to list: StoredList) -> (Change, ListOrder) {
        let items = Self.items(of: list)
        let old = entries
        var prefix = 0
        let shorter = min(old.count, items.count)
        while prefix < shorter, old[prefix].section == items[prefix].0, old[prefix].url == items[prefix].1 {
            prefix += 1
        }
        var suffix = 0
        while suffix < shorter - prefix, old[old.count - 1 - suffix].section == items[items.count - 1 - suffix].0,
            old[old.count - 1 - suffix].url == items[items.count - 1 - suffix].1
        {
            suffix += 1
        }
        let oldMiddle = prefix..<(old.count - suffix)
        let newMiddle = prefix..<(items.count - suffix)
        if oldMiddle.isEmpty, newMiddle.isEmpty {
            return (Change(deleted: nil, inserted: [], rewritesAll: false, rowsTouched: 0), self)
        }
        let deleted =
            oldMiddle.isEmpty ? nil : old[oldMiddle.lowerBound].position...old[oldMiddle.upperBound - 1].position
        let count = Int64(newMiddle.count)
        // The open interval the new middle goes into.
        let low: Int64
        let high: Int64
        switch (prefix > 0, suffix > 0) {
        case (true, true):
            low = old[prefix - 1].position
            high = old[old.count - suffix].position
        case (true, false):
            low = old[prefix - 1].position
            high = low + (count + 1) * Self.spacing
        case (false, true):
            high = old[old.count - suffix].position
            low = high - (count + 1) * Self.spacing
        case (false, false):
            low = -Self.spacing
            high = count * Self.spacing
        }
        let step = (high - low) / (count + 1)
        guard step >= 1 else {
            let fresh = ListOrder(list: list)
            let change = Change(
                deleted: nil, inserted: fresh.entries, rewritesAll: true,
                rowsTouched: old.count + fresh.entries.count)
            return (change, fresh)
        }
        let inserted = newMiddle.enumerated().map { offset, index in
            Entry(position: low + step * Int64(offset + 1), section: items[index].0, url: items[index].1)
        }
        var after = Array(old[..<prefix])
        after.reserveCapacity(items.count)
        after += inserted
        after += old[(old.count - suffix)...]
        let change = Change(
            deleted: deleted, inserted: inserted, rewritesAll: false, rowsTouched: oldMiddle.count + inserted.count)
        return (change, ListOrder(entries: after))
    }

    /// The sections and trash of the rows, for a list with `sectionCount` sections.
    func sectionsAndTrash(sectionCount: Int) -> (sections: [[String]], trash: [String]) {
        var sections = Array(repeating: [String](), count: sectionCount)
        var trash: [String] = []
        for entry in entries {
            if entry.section == Self.trashSection {
                trash.append(entry.url)
            } else if Int(entry.section) < sectionCount, entry.section >= 0 {
                sections[Int(entry.section)].append(entry.url)
            }
        }
        return (sections, trash)
    }

    /// A list's URLs with their section numbers, sections first, then the trash.
    private static func items(of list: StoredList) -> [(Int32, String)] {
        var items: [(Int32, String)] = []
        items.reserveCapacity(list.sections.reduce(list.trash.count) { $0 + $1.count })
        for (number, section) in list.sections.enumerated() {
            for url in section { items.append((Int32(number), url)) }
        }
        for url in list.trash { items.append((trashSection, url)) }
        return items
    }
}
