import PeregrineStorage

/// A list record written as the difference from the list before it: what the journal writes
/// for a ``StoreChange/putList(_:)`` when the same segment already holds the list, so that
/// adding one task to a list of 10,000 costs a record of one URL, not of 10,000.
///
/// The sections are taken as one sequence of URLs with a length per section; the edit replaces
/// one range of that sequence (`remove` entries from `at` by `insert`) and gives the new
/// lengths. The trash is edited the same way. Titles and settings are written whole (they are
/// small). `base` and `trashBase` are the lengths the edit applies to: a replay that finds other
/// lengths (a record before it was lost) refuses the edit rather than build a wrong list.
package struct StoredListEdit: Sendable, Hashable {
    /// One range replaced in a sequence of URLs.
    package struct Splice: Sendable, Hashable {
        /// The length of the sequence before the edit.
        package var base: Int
        /// Where the replaced range starts.
        package var at: Int
        /// How many entries it replaces.
        package var remove: Int
        /// What takes their place.
        package var insert: [String]

        /// The splice that turns `old` into `new`: the range between their common prefix and
        /// common suffix. Equal strings that share storage compare in O(1), so for a list whose
        /// URLs were not rebuilt this costs a pass over pointers.
        init(from old: FlatView, to new: FlatView) {
            let room = min(old.count, new.count)
            var prefix = 0
            var a = old.start
            var b = new.start
            while prefix < room, old[a] == new[b] {
                prefix += 1
                old.advance(&a)
                new.advance(&b)
            }
            var suffix = 0
            a = old.end
            b = new.end
            while suffix < room - prefix {
                old.retreat(&a)
                new.retreat(&b)
                guard old[a] == new[b] else { break }
                suffix += 1
            }
            base = old.count
            at = prefix
            remove = old.count - prefix - suffix
            insert = new.elements(prefix..<(new.count - suffix))
        }

        package init(base: Int, at: Int, remove: Int, insert: [String]) {
            self.base = base
            self.at = at
            self.remove = remove
            self.insert = insert
        }

        /// Whether it applies to a sequence of `count` entries.
        func applies(toCount count: Int) -> Bool {
            count == base && at >= 0 && remove >= 0 && at <= count - remove
        }

        /// How many entries it writes.
        var size: Int { insert.count }
    }

    /// The list's identifier.
    package var identifier: String
    /// The sections' URLs as one sequence.
    package var sections: Splice
    /// The length of each section after the edit.
    package var counts: [Int]
    /// The trash.
    package var trash: Splice
    /// Everything but the sections' URLs and the trash: titles and settings, written whole.
    package var settings: StoredList

    /// The edit from `old` to `new` (the same list); nil when writing `new` whole is no larger.
    package init?(from old: StoredList, to new: StoredList) {
        guard old.identifier == new.identifier else { return nil }
        let newView = FlatView(new.sections)
        let sections = Splice(from: FlatView(old.sections), to: newView)
        let trash = Splice(from: FlatView([old.trash]), to: FlatView([new.trash]))
        // Worth it only when it leaves out most of the list (a sort rewrites it anyway).
        guard 2 * (sections.size + trash.size) < newView.count + new.trash.count else { return nil }
        identifier = new.identifier
        self.sections = sections
        self.trash = trash
        counts = new.sections.map(\.count)
        var settings = new
        settings.sections = []
        settings.trash = []
        self.settings = settings
    }

    package init(identifier: String, sections: Splice, counts: [Int], trash: Splice, settings: StoredList) {
        self.identifier = identifier
        self.sections = sections
        self.counts = counts
        self.trash = trash
        self.settings = settings
    }
}

/// Sections read as one sequence, stepped through with plain indexes (no generic iterators: this
/// runs for every change of a list).
struct FlatView {
    /// A position: a section and an item in it.
    struct Position {
        var section: Int
        var item: Int
    }

    let sections: [[String]]
    let count: Int

    init(_ sections: [[String]]) {
        self.sections = sections
        var count = 0
        for section in sections { count += section.count }
        self.count = count
    }

    /// The first entry's position (or `end` when there is none).
    var start: Position {
        var position = Position(section: 0, item: 0)
        skipEmpty(&position)
        return position
    }

    /// The position after the last entry.
    var end: Position { Position(section: sections.count, item: 0) }

    subscript(position: Position) -> String { sections[position.section][position.item] }

    func advance(_ position: inout Position) {
        position.item += 1
        skipEmpty(&position)
    }

    /// Steps back to the entry before `position`; there must be one.
    func retreat(_ position: inout Position) {
        while position.item == 0 {
            position.section -= 1
            position.item = sections[position.section].count
        }
        position.item -= 1
    }

    private func skipEmpty(_ position: inout Position) {
        while position.section < sections.count, position.item >= sections[position.section].count {
            position.section += 1
            position.item = 0
        }
    }

    /// The entries at flat offsets `range`.
    func elements(_ range: Range<Int>) -> [String] {
        guard !range.isEmpty else { return [] }
        var result: [String] = []
        result.reserveCapacity(range.count)
        var offset = 0
        for section in sections {
            let lower = max(range.lowerBound - offset, 0)
            let upper = min(range.upperBound - offset, section.count)
            if lower < upper { result.append(contentsOf: section[lower..<upper]) }
            offset += section.count
            if offset >= range.upperBound { break }
        }
        return result
    }
}

/// A list as list edits apply to it: its sections' URLs as one sequence with the sections'
/// lengths, and its trash. An edit costs what it changes (at the end of a long list; a removal in
/// the middle moves pointers), and the sections are rebuilt once, when the list is read.
package struct FlatList: Sendable {
    package var urls: [String]
    package var counts: [Int]
    package var trash: [String]
    /// Titles and settings (its `sections` and `trash` are not used).
    package var settings: StoredList

    /// `list` in this form. Complexity: O(number of URLs).
    package init(_ list: StoredList) {
        urls = Array(list.sections.joined())
        counts = list.sections.map(\.count)
        trash = list.trash
        settings = list
        settings.sections = []
        settings.trash = []
    }

    /// Applies `edit`; false (and nothing changed) when it does not fit this list.
    package mutating func apply(_ edit: StoredListEdit) -> Bool {
        guard edit.sections.applies(toCount: urls.count), edit.trash.applies(toCount: trash.count),
            edit.counts.allSatisfy({ $0 >= 0 }),
            edit.counts.reduce(0, +) == urls.count - edit.sections.remove + edit.sections.insert.count
        else { return false }
        urls.replaceSubrange(edit.sections.at..<(edit.sections.at + edit.sections.remove), with: edit.sections.insert)
        trash.replaceSubrange(edit.trash.at..<(edit.trash.at + edit.trash.remove), with: edit.trash.insert)
        counts = edit.counts
        settings = edit.settings
        return true
    }

    /// The list as a record.
    package var list: StoredList {
        var list = settings
        var sections: [[String]] = []
        sections.reserveCapacity(counts.count)
        var start = 0
        for count in counts {
            sections.append(Array(urls[start..<(start + count)]))
            start += count
        }
        list.sections = sections
        list.trash = trash
        return list
    }
}
