import Foundation
import PeregrineCore
import PeregrineSorting
import TestSupport
import Testing

/// 10 000 seeded random operations, good and bad, each checked against ``ReferenceList`` and
/// against the list's own invariants, and each change played on the old view.
@Suite struct RandomOperationsTests {
    struct Run {
        var rng: SeededRandom
        let clock = ManualClock(Fixtures.noon)
        var list: DownloadList
        var reference: ReferenceList
        var nextID = 0
        var failed = false

        init(seed: UInt64, type: ListSortType) {
            rng = SeededRandom(seed: seed)
            list = DownloadList(sortType: type, clock: clock.function, calendar: Fixtures.utc)
            reference = ReferenceList(type: type, calendar: Fixtures.utc)
        }

        mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &rng) }
        mutating func chance(_ percent: Int) -> Bool { int(0..<100) < percent }

        mutating func name() -> String {
            let alphabet = ["a", "b", "A", "B", "é", "É", "z", "0", "1", "2", "9", " ", "-", "file", "File"]
            return (0..<int(1..<5)).map { _ in alphabet[int(0..<alphabet.count)] }.joined()
        }

        mutating func attributes(url: String) -> ListItem {
            let sizes: [Int64] = [
                -1, 0, 5, 1_000_000, 1_000_001, 100_000_000, 100_000_001, 1_000_000_000, 2_000_000_000,
            ]
            let offset = TimeInterval(int(-40 * 24..<2 * 24)) * 3600 + TimeInterval(int(0..<3))
            return ListItem(
                url: url,
                fileName: name(),
                fileSize: chance(50) ? sizes[int(0..<sizes.count)] : Int64(int(0..<2000)),
                addTime: clock.now + offset,
                kind: FileKind.allCases[int(0..<FileKind.allCases.count)],
                isFinished: chance(30)
            )
        }

        mutating func newItems() -> [ListItem] {
            (0..<int(1..<8)).map { _ in
                // Now and then a URL the list already knows, or one repeated in the batch.
                if chance(10), let known = reference.items.keys.randomElement(using: &rng) {
                    return attributes(url: known)
                }
                nextID += 1
                return attributes(url: "https://example.com/\(nextID)")
            }
        }

        func shownPaths() -> [ListIndexPath] {
            list.downloadList.enumerated().flatMap { section, urls in
                urls.indices.map { ListIndexPath(section: section, item: $0) }
            }
        }

        mutating func randomSubset<T>(_ values: [T], maximum: Int) -> [T] {
            guard !values.isEmpty else { return [] }
            return (0..<int(1..<(maximum + 1))).map { _ in values[int(0..<values.count)] }
        }

        /// A valid insertion point in manual mode, if there is a section.
        mutating func insertionPoint() -> ListIndexPath? {
            guard list.sectionCount > 0 else { return nil }
            let section = int(0..<list.sectionCount)
            return ListIndexPath(section: section, item: int(0..<(list.taskCountInSection(section)! + 1)))
        }

        mutating func step(_ number: Int) {
            let now = clock.now
            let before = ShownList(list)
            let beforeState = list.state
            var change = ListChange()
            var expectedError: DownloadListError.Code?
            var thrown: DownloadListError?
            var operation = ""
            func attempt(_ body: () throws(DownloadListError) -> ListChange) {
                do { change = try body() } catch { thrown = error }
            }

            switch int(0..<20) {
            case 0, 1, 2, 3:
                let items = newItems()
                if list.sortType != .manual {
                    operation = "add \(items.map(\.url))"
                    attempt { () throws(DownloadListError) in try list.add(items) }
                    _ = reference.add(items, now: now)
                } else if chance(50), let point = insertionPoint() {
                    operation = "insert \(items.map(\.url)) at \(point)"
                    attempt { () throws(DownloadListError) in try list.insert(items, at: point) }
                    reference.insertManually(items, at: point)
                } else {
                    let section = int(0..<(list.sectionCount + 1))
                    let more = chance(30) ? newItems() : []
                    let groups = more.isEmpty ? [items] : [items, more]
                    let titles = groups.indices.map { "S\(number)-\($0)" }
                    operation = "insert sections at \(section)"
                    attempt { () throws(DownloadListError) in
                        try list.insert(sections: groups, titles: titles, atSection: section)
                    }
                    reference.insertSections(groups, titles: titles, at: section)
                }
            case 4, 5:
                let urls = randomSubset(list.downloadList.flatMap { $0 }, maximum: 3)
                let toTrash = chance(70)
                operation = "remove \(urls) toTrash \(toTrash)"
                attempt { () throws(DownloadListError) in try list.remove(urls, moveToTrash: toTrash) }
                let shown = before.sections.flatMap { $0 }.filter(Set(urls).contains)
                reference.remove(shown, toTrash: toTrash)
            case 6:
                let paths = randomSubset(shownPaths(), maximum: 3)
                let toTrash = chance(50)
                operation = "remove at \(paths)"
                attempt { () throws(DownloadListError) in try list.remove(at: paths, moveToTrash: toTrash) }
                let urls = Set(paths.map { before.sections[$0.section][$0.item] })
                reference.remove(before.sections.flatMap { $0 }.filter(urls.contains), toTrash: toTrash)
            case 7:
                guard list.sectionCount > 0 else { return }
                let section = int(0..<list.sectionCount)
                let toTrash = chance(50)
                operation = "remove section \(section)"
                attempt { () throws(DownloadListError) in try list.removeTasks(inSection: section, moveToTrash: toTrash)
                }
                reference.remove(before.sections[section], toTrash: toTrash)
            case 8:
                var urls = Array(Set(randomSubset(list.toDeleteList, maximum: 3)))
                urls.shuffle(using: &rng)
                if list.sortType == .manual {
                    guard let point = insertionPoint(), !urls.isEmpty else { return }
                    operation = "restore \(urls) to \(point)"
                    attempt { () throws(DownloadListError) in try list.restoreFromTrash(urls, to: point) }
                    reference.restore(urls, to: point, now: now)
                } else {
                    guard !urls.isEmpty else { return }
                    operation = "restore \(urls)"
                    attempt { () throws(DownloadListError) in try list.restoreFromTrash(urls) }
                    reference.restore(urls, to: ListIndexPath(section: 0, item: 0), now: now)
                }
            case 9:
                if chance(10) {
                    operation = "empty trash"
                    change = list.emptyTrash()
                    reference.forget(before.trash)
                } else {
                    let indexes = Array(Set(randomSubset(Array(before.trash.indices), maximum: 2)))
                    operation = "forget trash rows \(indexes)"
                    attempt { () throws(DownloadListError) in try list.removeFromTrash(at: indexes) }
                    reference.forget(indexes.map { before.trash[$0] })
                }
            case 10, 11:
                let known = Array(reference.items.keys)
                guard !known.isEmpty else { return }
                let batch = Set(randomSubset(known, maximum: chance(70) ? 1 : 4)).sorted().map { url in
                    var updated = attributes(url: url)
                    if chance(50) { updated.fileName = reference.items[url]!.fileName }
                    if chance(50) { updated.addTime = reference.items[url]!.addTime }
                    return updated
                }
                operation = "update \(batch)"
                attempt { () throws(DownloadListError) in try list.update(batch) }
                for updated in batch { reference.update(updated, now: now) }
            case 12:
                let type = ListSortType.allCases[int(0..<ListSortType.allCases.count)]
                let order: ListSortOrder = chance(50) ? .ascending : .descending
                operation = "sort by \(type) \(order)"
                change = list.sortListBy(type: type, order: order)
                reference.sort(type: type, order: order, now: now)
            case 13:
                let options = ListSectioning(rawValue: int(0..<8))
                operation = "sectioning \(options.rawValue)"
                change = list.setSectioning(options)
                reference.setSectioning(options, now: now)
            case 14:
                operation = "advance clock"
                clock.advance(by: TimeInterval(int(0..<30)) * 3600)
                if chance(30) {
                    change = list.sortAgain()
                    if reference.type != .manual { reference.rebuild(now: clock.now) }
                }
            case 15, 16:
                guard list.sortType == .manual else {
                    return manualOperationOutsideManualMode(&operation, &expectedError, &change, &thrown)
                }
                manualOperation(&operation, &change, &thrown, before: before, number: number)
            case 17:
                let byFirstLetter = chance(70)
                let reverseTraits = chance(50)
                let bySize = chance(50)
                let order: ListSortOrder = chance(50) ? .ascending : .descending
                let trait: (ListItem) -> String? = { item in
                    guard byFirstLetter, item.fileSize >= 0 else { return nil }
                    return String(item.fileName.prefix(1))
                }
                let taskAscending: (ListItem, ListItem) -> Bool = { a, b in
                    bySize ? (a.fileSize, a.url) < (b.fileSize, b.url) : a.url < b.url
                }
                let traitAscending: ((String, String) -> Bool)? = reverseTraits ? { $0 > $1 } : nil
                operation = "custom sort"
                attempt { () throws(DownloadListError) in
                    try list.sortListBy(
                        order: order, taskTrait: trait, traitAscending: traitAscending, taskAscending: taskAscending)
                }
                reference.customSort(
                    order: order, trait: trait, traitAscending: traitAscending, taskAscending: taskAscending)
            case 18:
                badInput(&operation, &expectedError, &thrown)
            default:
                operation = "save and restore"
                do {
                    let data = try JSONEncoder().encode(list.state)
                    let state = try JSONDecoder().decode(DownloadListState.self, from: data)
                    let items = list.allTasksSet.map { list.item(for: $0)! }
                    list = try DownloadList(
                        restoring: state, items: items, clock: clock.function, calendar: Fixtures.utc)
                    reference.renumberAsRestored()
                } catch {
                    Issue.record("step \(number): restore failed: \(error)")
                    failed = true
                }
            }

            if let expectedError {
                #expect(thrown?.code == expectedError, "step \(number) \(operation): \(String(describing: thrown))")
                #expect(list.state == beforeState, "step \(number) \(operation): a refused operation changed the list")
            } else if let thrown {
                Issue.record("step \(number) \(operation): unexpected \(thrown)")
                failed = true
            }
            check(number, operation, change: change, before: before)
        }

        mutating func manualOperation(
            _ operation: inout String,
            _ change: inout ListChange,
            _ thrown: inout DownloadListError?,
            before: ShownList,
            number: Int
        ) {
            func attempt(_ body: () throws(DownloadListError) -> ListChange) {
                do { change = try body() } catch { thrown = error }
            }
            switch int(0..<5) {
            case 0:
                let paths = shownPaths()
                guard let from = paths.randomElement(using: &rng) else { return }
                let section = int(0..<list.sectionCount)
                let count = list.taskCountInSection(section)! + (section == from.section ? 0 : 1)
                let to = ListIndexPath(section: section, item: int(0..<count))
                operation = "move \(from) to \(to)"
                attempt { () throws(DownloadListError) in try list.moveTask(at: from, to: to) }
                let url = reference.manual[from.section].urls.remove(at: from.item)
                reference.manual[to.section].urls.insert(url, at: to.item)
            case 1:
                guard list.sectionCount > 0 else { return }
                let (from, to) = (int(0..<list.sectionCount), int(0..<list.sectionCount))
                operation = "move section \(from) to \(to)"
                attempt { () throws(DownloadListError) in try list.moveTasks(inSection: from, to: to) }
                let section = reference.manual.remove(at: from)
                reference.manual.insert(section, at: to)
            case 2:
                guard list.sectionCount > 0 else { return }
                let section = int(0..<list.sectionCount)
                operation = "retitle \(section)"
                attempt { () throws(DownloadListError) in try list.changeTitleOfSection(section, to: "R\(number)") }
                reference.manual[section].title = "R\(number)"
            case 3:
                let section = int(0..<(list.sectionCount + 1))
                operation = "placeholder at \(section)"
                attempt { () throws(DownloadListError) in
                    try list.insertPlaceholderSection(at: section, title: "P\(number)")
                }
                reference.manual.insert(("P\(number)", []), at: section)
            default:
                guard let section = before.sections.indices.first(where: { before.sections[$0].isEmpty }) else {
                    return
                }
                operation = "remove empty section \(section)"
                attempt { () throws(DownloadListError) in try list.removeEmptySection(section) }
                reference.manual.remove(at: section)
            }
        }

        mutating func manualOperationOutsideManualMode(
            _ operation: inout String,
            _ expectedError: inout DownloadListError.Code?,
            _ change: inout ListChange,
            _ thrown: inout DownloadListError?
        ) {
            operation = "manual operation in a predefined mode"
            expectedError = .requiresManualMode
            do {
                switch int(0..<3) {
                case 0:
                    change = try list.moveTask(
                        at: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 0, item: 0))
                case 1: change = try list.moveTasks(inSection: 0, to: 0)
                default: change = try list.insertPlaceholderSection(at: 0, title: "X")
                }
            } catch {
                thrown = error
            }
        }

        mutating func badInput(
            _ operation: inout String, _ expectedError: inout DownloadListError.Code?,
            _ thrown: inout DownloadListError?
        ) {
            let unknown = "https://unknown.example/\(int(0..<1000))"
            do {
                switch int(0..<7) {
                case 0:
                    operation = "remove an unknown URL"
                    expectedError = .unknownURL
                    let known = list.downloadList.flatMap { $0 }.prefix(1)
                    _ = try list.remove(Array(known) + [unknown], moveToTrash: chance(50))
                case 1:
                    operation = "update an unknown URL"
                    expectedError = .unknownURL
                    _ = try list.update(attributes(url: unknown))
                case 2:
                    operation = "restore a URL that is not in the trash"
                    expectedError = .unknownURL
                    _ = try list.restoreFromTrash(list.toDeleteList.prefix(1) + [unknown])
                case 3:
                    operation = "remove at an index path out of bounds"
                    expectedError = .indexPathOutOfBounds
                    let section = int(0..<(list.sectionCount + 1))
                    let item = (list.taskCountInSection(section) ?? 0) + int(0..<3)
                    _ = try list.remove(
                        at: shownPaths().prefix(1) + [ListIndexPath(section: section, item: item)], moveToTrash: true)
                case 4:
                    operation = "remove a section out of bounds"
                    expectedError = .sectionOutOfBounds
                    _ = try list.removeTasks(inSection: list.sectionCount + int(0..<3), moveToTrash: true)
                case 5:
                    operation = "restore trash row out of bounds"
                    expectedError = .trashIndexOutOfBounds
                    _ = try list.restoreFromTrash(at: [list.trashCount])
                default:
                    if list.sortType == .manual {
                        operation = "add without a location in manual mode"
                        expectedError = .requiresPredefinedMode
                        _ = try list.add([attributes(url: unknown)])
                    } else {
                        operation = "retitle in a predefined mode"
                        expectedError = .requiresManualMode
                        _ = try list.changeTitleOfSection(0, to: "X")
                    }
                }
            } catch {
                thrown = error
            }
        }

        mutating func check(_ number: Int, _ operation: String, change: ListChange, before: ShownList) {
            let context = "step \(number) \(operation)"
            let shown = ShownList(list)
            let expected = reference.layout()
            guard shown.sections == expected.sections, shown.titles == expected.titles, shown.trash == reference.trash
            else {
                Issue.record("\(context): list \(shown) expected \(expected) trash \(reference.trash)")
                failed = true
                return
            }
            if simulate(change, on: before, reaching: list) != shown {
                Issue.record("\(context): change \(change) does not lead from \(before) to \(shown)")
                failed = true
            }
            // Every URL is in exactly one place, and the two lookups agree.
            let listed = shown.sections.flatMap { $0 }
            let everywhere = listed + shown.trash
            if Set(everywhere).count != everywhere.count || Set(everywhere) != list.allTasksSet
                || Set(reference.items.keys) != list.allTasksSet || list.count != listed.count
                || list.trashCount != shown.trash.count || list.downloadTaskSet != Set(listed)
            {
                Issue.record("\(context): a URL is missing or in two places")
                failed = true
            }
            for (section, urls) in shown.sections.enumerated() {
                if list.sortType != .manual, urls.isEmpty {
                    Issue.record("\(context): empty section \(section) in a predefined mode")
                    failed = true
                }
                for (row, url) in urls.enumerated() {
                    let path = ListIndexPath(section: section, item: row)
                    if list[url] != path || list[path] != url {
                        Issue.record("\(context): lookups disagree at \(path) (\(url))")
                        failed = true
                        return
                    }
                }
            }
            for url in shown.trash where list[url] != nil || !list.isInTrash(url) {
                Issue.record("\(context): trashed \(url) is still found in the list")
                failed = true
            }
        }
    }

    @Test(arguments: [(UInt64(1), ListSortType.addTime), (2, .manual), (3, .fileName)])
    func randomOperationsKeepEveryInvariant(seed: UInt64, start: ListSortType) {
        var run = Run(seed: seed, type: start)
        for number in 0..<(seed == 1 ? 10_000 : 3_000) {
            run.step(number)
            if run.failed { break }
        }
    }
}
