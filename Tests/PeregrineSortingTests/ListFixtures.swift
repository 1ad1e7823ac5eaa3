import Foundation
import PeregrineCore
import PeregrineSorting
import Synchronization
import Testing

/// A clock the tests set and advance by hand.
final class ManualClock: Sendable {
    private let current: Locked<Date>

    init(_ date: Date) { current = Locked(date) }

    var now: Date { current.withLock { $0 } }

    func set(_ date: Date) { current.withLock { $0 = date } }

    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }

    var function: @Sendable () -> Date { { self.now } }
}

enum Fixtures {
    /// A Gregorian calendar in UTC.
    static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar
    }

    /// 2024-03-15 12:00:00 UTC, a Friday.
    static let noon = Date(timeIntervalSince1970: 1_710_504_000)

    static let day: TimeInterval = 86_400

    /// A list on a fixed clock (noon, UTC) unless another clock is given.
    static func list(
        _ type: ListSortType = .addTime,
        order: ListSortOrder = .ascending,
        sectioning: ListSectioning = [],
        clock: ManualClock = ManualClock(noon)
    ) -> DownloadList {
        DownloadList(sortType: type, sortOrder: order, sectioning: sectioning, clock: clock.function, calendar: utc)
    }
}

/// An item whose URL is derived from its name unless given.
func item(
    _ name: String,
    size: Int64 = -1,
    added: Date = Fixtures.noon,
    kind: FileKind = .other,
    url: String? = nil,
    finished: Bool = false
) -> ListItem {
    ListItem(
        url: url ?? "https://example.com/\(name)",
        fileName: name,
        fileSize: size,
        addTime: added,
        kind: kind,
        isFinished: finished
    )
}

/// The file names of a list, section by section.
func names(_ list: DownloadList) -> [[String]] {
    list.downloadList.map { $0.map { list.item(for: $0)!.fileName } }
}

/// What a table view shows: rows and titles (and the trash).
struct ShownList: Equatable, CustomStringConvertible {
    var sections: [[String]]
    var titles: [String]
    var trash: [String]

    init(_ list: DownloadList) {
        sections = list.downloadList
        titles = list.sectionTitles
        trash = list.toDeleteList
    }

    var description: String { "sections \(sections) titles \(titles) trash \(trash)" }
}

/// Plays a change on the old view the way `UITableView.performBatchUpdates` would, taking
/// inserted rows and sections from the new list; nil when the change breaks the batch-update
/// rules (an index out of range, a row moved into an inserted section …).
func simulate(_ change: ListChange, on old: ShownList, reaching new: DownloadList) -> ShownList? {
    var result = old
    let newShown = ShownList(new)
    if change.isReload {
        result.sections = newShown.sections
        result.titles = newShown.titles
    } else {
        // Deletions and move sources, in old coordinates.
        let deletedSections = Set(change.deletedSections)
        let movedSectionSources = Set(change.movedSections.map(\.from))
        var removedItems = Set(change.deletedItems)
        for move in change.movedItems {
            guard !deletedSections.contains(move.from.section) else { return nil }
            removedItems.insert(move.from)
        }
        for path in removedItems {
            guard path.section >= 0, path.section < old.sections.count, path.item >= 0,
                path.item < old.sections[path.section].count, !deletedSections.contains(path.section)
            else { return nil }
        }
        guard deletedSections.allSatisfy({ $0 >= 0 && $0 < old.sections.count }) else { return nil }
        var survivors: [(title: String, rows: [String])] = []
        var movedSections: [Int: (title: String, rows: [String])] = [:]
        for (index, rows) in old.sections.enumerated() {
            let kept = rows.enumerated().filter {
                !removedItems.contains(ListIndexPath(section: index, item: $0.offset))
            }
            .map(\.element)
            if deletedSections.contains(index) { continue }
            if movedSectionSources.contains(index) {
                let move = change.movedSections.first { $0.from == index }!
                movedSections[move.to] = (old.titles[index], kept)
                continue
            }
            survivors.append((old.titles[index], kept))
        }
        // Insertions and move destinations, in new coordinates.
        let insertedSections = Set(change.insertedSections)
        let finalCount = survivors.count + insertedSections.count + movedSections.count
        guard finalCount == newShown.sections.count else { return nil }
        var sections: [(title: String, rows: [String])] = []
        var next = 0
        for index in 0..<finalCount {
            if insertedSections.contains(index) {
                sections.append((newShown.titles[index], newShown.sections[index]))
            } else if let moved = movedSections[index] {
                sections.append(moved)
            } else {
                guard next < survivors.count else { return nil }
                sections.append(survivors[next])
                next += 1
            }
        }
        for index in change.retitledSections {
            guard index < sections.count else { return nil }
            sections[index].title = newShown.titles[index]
        }
        var insertions: [(ListIndexPath, String)] = change.insertedItems.map { path in
            (path, new[path] ?? "?")
        }
        for move in change.movedItems { insertions.append((move.to, old.sections[move.from.section][move.from.item])) }
        insertions.sort { $0.0 < $1.0 }
        for (path, url) in insertions {
            guard path.section >= 0, path.section < sections.count, !insertedSections.contains(path.section),
                path.item >= 0, path.item <= sections[path.section].rows.count
            else { return nil }
            sections[path.section].rows.insert(url, at: path.item)
        }
        result.sections = sections.map(\.rows)
        result.titles = sections.map(\.title)
    }
    var trash = old.trash
    for index in change.deletedTrashIndexes.sorted(by: >) {
        guard index >= 0, index < trash.count else { return nil }
        trash.remove(at: index)
    }
    for index in change.insertedTrashIndexes.sorted() {
        guard index >= 0, index <= trash.count, index < newShown.trash.count else { return nil }
        trash.insert(newShown.trash[index], at: index)
    }
    result.trash = trash
    return result
}

/// Applies a mutation and checks that its change, played on the old view, gives the new one.
@discardableResult
func expectChange(
    _ list: inout DownloadList,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ mutation: (inout DownloadList) throws -> ListChange
) rethrows -> ListChange {
    let before = ShownList(list)
    let change = try mutation(&list)
    let played = simulate(change, on: before, reaching: list)
    #expect(
        played == ShownList(list), "change \(change) does not lead from \(before) to \(ShownList(list))",
        sourceLocation: sourceLocation)
    return change
}
