import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The download list as a table view's data source: tasks by URL string in titled sections,
/// sorted by hand or by a predefined attribute, with a trash (SDEDownloadManager's list model).
///
/// A pure value: no I/O and no locking. The facade owns one behind its lock, feeds it
/// ``ListItem``s and drives it; every mutation returns a ``ListChange`` that a UI can animate,
/// and throws a ``DownloadListError`` (leaving the list unchanged) on bad input.
///
/// ## Modes
/// - *Manual* (``ListSortType/manual``): the caller inserts tasks at a section or an index path,
///   creates titled sections and moves tasks and sections.
/// - *Predefined* (the four other types): the list keeps itself sorted by the type and
///   ``sortOrder``, split into sections by ``sectioning``. Adding tasks without a location is
///   only possible here, and switches the type to ``ListSortType/addTime``. A predefined list
///   never has an empty section.
///
/// ## Complexity
/// Lookups by URL (``subscript(_:)-(String)``) and by index path
/// (``subscript(_:)-(ListIndexPath)``), ``sectionCount``, ``taskCountInSection(_:)`` and
/// ``titleForHeaderInSection(_:)`` are O(1). Descending orders are a view of ascending storage,
/// so tasks that belong at the end of the sort (new tasks in addTime mode, either order) are
/// added in O(1) amortized each. A task placed elsewhere, or removed, costs O(m) where m is the
/// number of tasks after it in its section. A sort is O(n log n) for n tasks. Properties that
/// return whole collections (``downloadList``, ``downloadTaskSet`` …) build them: O(n).
public struct DownloadList: Sendable {
    /// The current sort type. Change it with ``sortListBy(type:order:)``.
    public internal(set) var sortType: ListSortType
    /// The current sort order; ignored in manual mode. Change it with ``sortListBy(type:order:)``.
    public internal(set) var sortOrder: ListSortOrder
    /// Which predefined types are split into sections. Change it with ``setSectioning(_:)``.
    public internal(set) var sectioning: ListSectioning
    /// The clock the add-time groups are computed from, read at every sort.
    public let clock: @Sendable () -> Date
    /// The calendar (and time zone) the add-time groups are computed in.
    public let calendar: Calendar

    /// The title of a manual-mode section made for the caller: after switching from a predefined
    /// type, and for tasks without a trait in a custom sort.
    public static let placeholderTitle = "Title"

    // MARK: Storage

    typealias Slot = Int32

    /// Where an entry is: in a section (its id, ≥ 0), in the trash, detached while being
    /// placed, or a free slot.
    static let inTrash: Int32 = -1
    static let detached: Int32 = -2
    static let free: Int32 = -3

    struct Entry {
        var item: ListItem
        var nameKey: FileNameKey
        /// A section id, or ``DownloadList/inTrash``, ``DownloadList/detached``, ``DownloadList/free``.
        var section: Int32
        /// The index in the section's (or the trash's) storage order.
        var position: Int32
        /// When it was added to the list, counting additions: tasks added at the same time (a
        /// batch) sort by time added in the order they were given.
        var sequence: UInt64
    }

    struct Section {
        var id: Int32
        var title: String
        /// The group it holds in a predefined mode (add-time group, size group, index letter,
        /// file kind), 0 when not sectioned or in manual mode. Storage order is ascending rank.
        var rank: Int
        /// Slots, in ascending sort order in a predefined mode (descending is a reversed view).
        var members: [Slot]
    }

    var entries: [Entry] = []
    var freeSlots: [Slot] = []
    /// The ``Entry/sequence`` of the next entry allocated.
    var nextSequence: UInt64 = 0
    var slotByURL: [String: Slot] = [:]
    /// Sections in storage order; shown reversed when ``reversesSections``.
    var sections: [Section] = []
    /// Section id → index in ``sections``, or -1.
    var sectionIndexByID: [Int32] = []
    var freeSectionIDs: [Int32] = []
    /// The trash, oldest deletion first (``toDeleteList`` shows it reversed).
    var trash: [Slot] = []
    /// The groups the current add-time sections were made with.
    var addTimeGrouping: AddTimeGrouping?

    /// Creates an empty list.
    ///
    /// - Parameters:
    ///   - sortType: the initial sort type; `.manual` starts in manual mode (SDE's
    ///     `manualMode: true`). The default is `.addTime`.
    ///   - sortOrder: the initial order.
    ///   - sectioning: which predefined types are sectioned.
    ///   - clock: the current time, read at every sort for the add-time groups.
    ///   - calendar: the calendar and time zone that days are counted in.
    ///
    /// Complexity: O(1).
    public init(
        sortType: ListSortType = .addTime,
        sortOrder: ListSortOrder = .ascending,
        sectioning: ListSectioning = [],
        clock: @escaping @Sendable () -> Date = { Date() },
        calendar: Calendar = Calendar(identifier: .gregorian)
    ) {
        self.sortType = sortType
        self.sortOrder = sortOrder
        self.sectioning = sectioning
        self.clock = clock
        self.calendar = calendar
    }

    // MARK: - Presentation

    /// Descending predefined lists show sections in reverse, except fileType's fixed order.
    var reversesSections: Bool {
        sortOrder == .descending && sortType != .manual && sortType != .fileType
    }

    /// Descending predefined lists show every section's rows in reverse.
    var reversesRows: Bool { sortOrder == .descending && sortType != .manual }

    /// Storage index ↔ shown index of a section (the mapping is its own inverse).
    func shownSection(_ index: Int) -> Int { reversesSections ? sections.count - 1 - index : index }

    /// Storage position ↔ shown item index in a section of `count` tasks.
    func shownItem(_ position: Int, count: Int) -> Int { reversesRows ? count - 1 - position : position }

    /// The shown index path of a slot that is in a section.
    func indexPath(ofSlot slot: Slot) -> ListIndexPath {
        let index = Int(sectionIndexByID[Int(entries[Int(slot)].section)])
        return ListIndexPath(
            section: shownSection(index),
            item: shownItem(Int(entries[Int(slot)].position), count: sections[index].members.count)
        )
    }

    /// The slot at a shown index path, or nil when out of bounds.
    func slot(at indexPath: ListIndexPath) -> Slot? {
        guard indexPath.section >= 0, indexPath.section < sections.count, indexPath.item >= 0 else { return nil }
        let index = shownSection(indexPath.section)
        let count = sections[index].members.count
        guard indexPath.item < count else { return nil }
        return sections[index].members[shownItem(indexPath.item, count: count)]
    }

    /// The shown trash index of a trash slot.
    func trashIndex(ofSlot slot: Slot) -> Int { trash.count - 1 - Int(entries[Int(slot)].position) }

    // MARK: - Queries

    /// The URL strings, section by section, as shown. Complexity: O(n).
    public var downloadList: [[String]] {
        (0..<sections.count).map { shown in
            let members = sections[shownSection(shown)].members
            if reversesRows {
                return members.reversed().map { entries[Int($0)].item.url }
            }
            return members.map { entries[Int($0)].item.url }
        }
    }

    /// One title per section, as shown. Complexity: O(number of sections).
    public var sectionTitles: [String] {
        (0..<sections.count).map { sections[shownSection($0)].title }
    }

    /// The number of sections. Complexity: O(1).
    public var sectionCount: Int { sections.count }

    /// The number of tasks in the list (the trash not included). Complexity: O(1).
    public var count: Int { slotByURL.count - trash.count }

    /// The number of tasks in the trash. Complexity: O(1).
    public var trashCount: Int { trash.count }

    /// The number of tasks in a section, or nil when the section does not exist (SDE returned
    /// -1). Complexity: O(1).
    public func taskCountInSection(_ section: Int) -> Int? {
        guard section >= 0, section < sections.count else { return nil }
        return sections[shownSection(section)].members.count
    }

    /// The header title of a section, or nil when the section does not exist. Complexity: O(1).
    public func titleForHeaderInSection(_ section: Int) -> String? {
        guard section >= 0, section < sections.count else { return nil }
        return sections[shownSection(section)].title
    }

    /// The location of a task in the list, or nil when it is not in the list (it may be in the
    /// trash). Complexity: O(1).
    public subscript(url: String) -> ListIndexPath? {
        guard let slot = slotByURL[url], entries[Int(slot)].section >= 0 else { return nil }
        return indexPath(ofSlot: slot)
    }

    /// The URL string at a location, or nil when the location is out of bounds. Complexity: O(1).
    public subscript(indexPath: ListIndexPath) -> String? {
        slot(at: indexPath).map { entries[Int($0)].item.url }
    }

    /// The location of a task in the list (the same as the URL subscript). Complexity: O(1).
    public func indexPath(ofTask url: String) -> ListIndexPath? { self[url] }

    /// The attributes of a task in the list or the trash. Complexity: O(1).
    public func item(for url: String) -> ListItem? {
        slotByURL[url].map { entries[Int($0)].item }
    }

    /// Whether a task is in the list or the trash. Complexity: O(1).
    public func contains(_ url: String) -> Bool { slotByURL[url] != nil }

    /// Whether a task is in the trash. Complexity: O(1).
    public func isInTrash(_ url: String) -> Bool {
        slotByURL[url].map { entries[Int($0)].section == Self.inTrash } ?? false
    }

    /// The URL strings of a section, as shown.
    ///
    /// - Throws: ``DownloadListError/Code/sectionOutOfBounds``.
    /// - Complexity: O(tasks in the section).
    public func tasks(inSection section: Int) throws(DownloadListError) -> [String] {
        try checkSection(section)
        let members = sections[shownSection(section)].members
        let urls = members.map { entries[Int($0)].item.url }
        return reversesRows ? urls.reversed() : urls
    }

    /// The URL strings at locations, in the order given.
    ///
    /// - Throws: ``DownloadListError/Code/indexPathOutOfBounds`` when any location is out of
    ///   bounds.
    /// - Complexity: O(k) for k locations.
    public func tasks(at indexPaths: [ListIndexPath]) throws(DownloadListError) -> [String] {
        try indexPaths.map { (indexPath) throws(DownloadListError) -> String in
            guard let url = self[indexPath] else { throw outOfBounds(indexPath) }
            return url
        }
    }

    /// The URL strings of every task in the list. Complexity: O(n).
    public var downloadTaskSet: Set<String> {
        var set = Set<String>(minimumCapacity: count)
        for section in sections {
            for slot in section.members { set.insert(entries[Int(slot)].item.url) }
        }
        return set
    }

    /// The URL strings of every task, in the list and in the trash. Complexity: O(n).
    public var allTasksSet: Set<String> { Set(slotByURL.keys) }

    /// The trash: URL strings of deleted tasks, most recently deleted first. Complexity: O(trash).
    public var toDeleteList: [String] { trash.reversed().map { entries[Int($0)].item.url } }

    /// The unfinished tasks in the list (not the trash), most recently added first (of tasks
    /// added at the same time, the one added last first). Complexity: O(n log n).
    public var unfinishedList: [String] {
        var unfinished: [Entry] = []
        for section in sections {
            for slot in section.members where !entries[Int(slot)].item.isFinished {
                unfinished.append(entries[Int(slot)])
            }
        }
        unfinished.sort { ($0.item.addTime, $0.sequence) > ($1.item.addTime, $1.sequence) }
        return unfinished.map(\.item.url)
    }

    // MARK: - Checks

    func outOfBounds(_ indexPath: ListIndexPath) -> DownloadListError {
        DownloadListError(
            .indexPathOutOfBounds,
            "\(indexPath) is outside the list (\(sections.count) sections)"
        )
    }

    func checkSection(_ section: Int) throws(DownloadListError) {
        guard section >= 0, section < sections.count else {
            throw DownloadListError(
                .sectionOutOfBounds,
                "section \(section) does not exist (the list has \(sections.count))"
            )
        }
    }

    func checkManualMode(_ operation: String) throws(DownloadListError) {
        guard sortType == .manual else {
            throw DownloadListError(
                .requiresManualMode,
                "\(operation) needs manual mode; the list is sorted by \(sortType.rawValue): "
                    + "call sortListBy(type: .manual) first"
            )
        }
    }

    func checkTitle(_ title: String) throws(DownloadListError) {
        guard !title.isEmpty else {
            throw DownloadListError(.emptyTitle, "a manual-mode section needs a non-empty title")
        }
    }
}
