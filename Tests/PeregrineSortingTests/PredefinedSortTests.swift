import Foundation
import PeregrineCore
import PeregrineSorting
import TestSupport
import Testing

@Suite struct PredefinedSortTests {
    let day = Fixtures.day
    let now = Fixtures.noon

    // MARK: addTime

    @Test func addTimeSortsByCreationDateInOneTitledSection() throws {
        var list = Fixtures.list()
        try list.add([item("b", added: now - 10), item("a", added: now - 30), item("c", added: now - 20)])
        #expect(names(list) == [["a", "c", "b"]])
        #expect(list.sectionTitles == ["Sorted by Add Time"])
        list.sortListBy(type: .addTime, order: .descending)
        #expect(names(list) == [["b", "c", "a"]])
        #expect(list.sectionTitles == ["Sorted by Add Time"])
    }

    @Test func addTimeTiesKeepTheOrderOfAddition() throws {
        var list = Fixtures.list()
        try list.add([item("x", url: "u3"), item("y", url: "u1"), item("z", url: "u2")])
        #expect(list.downloadList == [["u3", "u1", "u2"]])
        list.sortListBy(type: .addTime, order: .descending)
        #expect(list.downloadList == [["u2", "u1", "u3"]])
        // Saved and restored (shown descending), the batch keeps its order.
        let restored = try DownloadList(
            restoring: list.state, items: list.allTasksSet.map { list.item(for: $0)! }, clock: { Fixtures.noon },
            calendar: Fixtures.utc)
        #expect(restored.downloadList == [["u2", "u1", "u3"]])
        var again = restored
        again.sortListBy(type: .addTime, order: .ascending)
        #expect(again.downloadList == [["u3", "u1", "u2"]])
    }

    @Test func addTimeSectionsAreTheSixGroupsOldestFirstWhenAscending() throws {
        var list = Fixtures.list(sectioning: .addTime)
        let midnight = now - 12 * 3600
        try list.add([
            item("future", added: midnight + day + 60),
            item("today", added: now - 60),
            item("yesterday", added: midnight - 3600),
            item("week", added: midnight - 3 * day),
            item("month", added: midnight - 20 * day),
            item("older", added: midnight - 90 * day),
            item("today2", added: midnight),
        ])
        #expect(list.sectionTitles == ["Older", "Last 30 Days", "Last 7 Days", "Yesterday", "Today", "Future"])
        #expect(names(list) == [["older"], ["month"], ["week"], ["yesterday"], ["today2", "today"], ["future"]])
        list.sortListBy(type: .addTime, order: .descending)
        #expect(list.sectionTitles == ["Future", "Today", "Yesterday", "Last 7 Days", "Last 30 Days", "Older"])
        #expect(names(list) == [["future"], ["today", "today2"], ["yesterday"], ["week"], ["month"], ["older"]])
    }

    @Test func addTimeSectionsDropEmptyGroups() throws {
        var list = Fixtures.list(sectioning: .addTime)
        try list.add([item("a", added: now), item("b", added: now - 40 * day)])
        #expect(list.sectionTitles == ["Older", "Today"])
    }

    @Test func addTimeGroupsAreRecomputedOnEachSort() throws {
        let clock = ManualClock(now)
        var list = Fixtures.list(sectioning: .addTime, clock: clock)
        try list.add([item("a", added: now)])
        #expect(list.sectionTitles == ["Today"])
        clock.advance(by: day)
        #expect(list.sectionTitles == ["Today"], "the list only changes when it sorts")
        list.sortAgain()
        #expect(list.sectionTitles == ["Yesterday"])
        clock.advance(by: 3 * day)
        list.sortListBy(type: .addTime)
        #expect(list.sectionTitles == ["Last 7 Days"])
    }

    @Test func addingOnALaterDaySortsAgainFirst() throws {
        let clock = ManualClock(now)
        var list = Fixtures.list(sectioning: .addTime, clock: clock)
        try list.add([item("a", added: now)])
        clock.advance(by: day)
        let change = try list.add([item("b", added: clock.now)])
        #expect(change.isReload)
        #expect(list.sectionTitles == ["Yesterday", "Today"])
        #expect(names(list) == [["a"], ["b"]])
    }

    // MARK: fileName

    @Test func fileNameSortsNumericallyAndCaseInsensitively() throws {
        var list = Fixtures.list()
        try list.add([item("file10"), item("File2"), item("file1"), item("Apple"), item("banana")])
        list.sortListBy(type: .fileName)
        #expect(names(list) == [["Apple", "banana", "file1", "File2", "file10"]])
        #expect(list.sectionTitles == ["Sorted by File Name"])
        list.sortListBy(type: .fileName, order: .descending)
        #expect(names(list) == [["file10", "File2", "file1", "banana", "Apple"]])
    }

    @Test func fileNameTiesAreBrokenBySize() throws {
        var list = Fixtures.list()
        try list.add([
            item("Song", size: 30, url: "u1"), item("song", size: 10, url: "u2"), item("SONG", size: 20, url: "u3"),
        ])
        list.sortListBy(type: .fileName)
        #expect(list.downloadList == [["u2", "u3", "u1"]])
    }

    @Test func fileNameIndexIsAToZThenHashWhenAscending() throws {
        var list = Fixtures.list(sectioning: .fileNameIndex)
        try list.add([
            item("zeta"), item("alpha"), item("Beta"), item("2 fast"), item("_misc"), item("Éclair"), item("東京"),
            item("apple"),
        ])
        list.sortListBy(type: .fileName)
        #expect(list.sectionTitles == ["A", "B", "E", "Z", "#"])
        #expect(names(list) == [["alpha", "apple"], ["Beta"], ["Éclair"], ["zeta"], ["2 fast", "_misc", "東京"]])
    }

    @Test func fileNameIndexPutsHashFirstWhenDescending() throws {
        var list = Fixtures.list(sectioning: .fileNameIndex)
        try list.add([item("zeta"), item("alpha"), item("apple"), item("2 fast"), item("10 fast")])
        list.sortListBy(type: .fileName, order: .descending)
        #expect(list.sectionTitles == ["#", "Z", "A"])
        #expect(names(list) == [["10 fast", "2 fast"], ["zeta"], ["apple", "alpha"]])
    }

    // MARK: fileSize

    @Test func fileSizeSortsBySizeWithTiesByName() throws {
        var list = Fixtures.list()
        try list.add([item("b", size: 5), item("a", size: 5), item("c", size: 1), item("d", size: -1)])
        list.sortListBy(type: .fileSize)
        #expect(names(list) == [["d", "c", "a", "b"]])
        #expect(list.sectionTitles == ["Sorted by File Size"])
        list.sortListBy(type: .fileSize, order: .descending)
        #expect(names(list) == [["b", "a", "c", "d"]])
    }

    @Test func fileSizeNameTiesCompareNumerically() throws {
        var list = Fixtures.list()
        try list.add([item("part10", size: 7), item("part9", size: 7)])
        list.sortListBy(type: .fileSize)
        #expect(names(list) == [["part9", "part10"]])
    }

    @Test func fileSizeSectionsUseTheFiveGroups() throws {
        var list = Fixtures.list(sectioning: .fileSize)
        try list.add([
            item("unknown", size: -1), item("zero", size: 0), item("1MB", size: 1_000_000),
            item("just over", size: 1_000_001), item("100MB", size: 100_000_000), item("1GB", size: 1_000_000_000),
            item("huge", size: 5_000_000_000),
        ])
        list.sortListBy(type: .fileSize)
        #expect(
            list.sectionTitles == ["Unknown Size", "0 ~ 1 MB", "1 MB ~ 100 MB", "100 MB ~ 1 GB", "Larger Than 1 GB"])
        #expect(names(list) == [["unknown"], ["zero", "1MB"], ["just over", "100MB"], ["1GB"], ["huge"]])
        list.sortListBy(type: .fileSize, order: .descending)
        #expect(
            list.sectionTitles == ["Larger Than 1 GB", "100 MB ~ 1 GB", "1 MB ~ 100 MB", "0 ~ 1 MB", "Unknown Size"])
        #expect(names(list) == [["huge"], ["1GB"], ["100MB", "just over"], ["1MB", "zero"], ["unknown"]])
    }

    // MARK: fileType

    @Test func fileTypeSectionsHaveTheFixedOrderAndDropEmptyOnes() throws {
        var list = Fixtures.list()
        try list.add([
            item("movie", kind: .video), item("notes", kind: .document), item("b-photo", kind: .image),
            item("a-photo", kind: .image), item("archive", kind: .other),
        ])
        list.sortListBy(type: .fileType)
        #expect(list.sectionTitles == ["Image", "Video", "Document", "Other"])
        #expect(names(list) == [["a-photo", "b-photo"], ["movie"], ["notes"], ["archive"]])
    }

    @Test func fileTypeDescendingReversesRowsButNotSections() throws {
        var list = Fixtures.list()
        try list.add([
            item("song", kind: .audio), item("b-photo", kind: .image), item("a-photo", kind: .image),
            item("clip2", kind: .video), item("clip10", kind: .video),
        ])
        list.sortListBy(type: .fileType, order: .descending)
        #expect(list.sectionTitles == ["Image", "Audio", "Video"])
        #expect(names(list) == [["b-photo", "a-photo"], ["song"], ["clip10", "clip2"]])
    }

    @Test func fileTypeIgnoresTheSectioningOptions() throws {
        var list = Fixtures.list()
        try list.add([item("a", kind: .image), item("b", kind: .audio)])
        list.sortListBy(type: .fileType)
        let change = list.setSectioning([.addTime, .fileSize, .fileNameIndex])
        #expect(change.isEmpty)
        #expect(list.sectionTitles == ["Image", "Audio"])
    }

    // MARK: sectioning switches

    @Test func turningSectioningOnSortsAgainIntoSections() throws {
        var list = Fixtures.list()
        try list.add([item("a", size: 10), item("b", size: 2_000_000)])
        list.sortListBy(type: .fileSize)
        #expect(list.sectionCount == 1)
        let change = list.setSectioning(.fileSize)
        #expect(change.isReload)
        #expect(list.sectionTitles == ["0 ~ 1 MB", "1 MB ~ 100 MB"])
        #expect(list.sectioningFileSizeList && !list.sectioningAddTimeList && !list.indexingFileNameList)
        #expect(list.setSectioning([.fileSize, .addTime]).isEmpty, "the addTime option does not affect fileSize")
        list.setSectioning([])
        #expect(list.sectionTitles == ["Sorted by File Size"])
    }

    @Test func anEmptyPredefinedListHasNoSections() throws {
        var list = Fixtures.list(sectioning: .addTime)
        #expect(list.sectionCount == 0)
        try list.add([item("a")])
        try list.remove(["https://example.com/a"], moveToTrash: false)
        #expect(list.sectionCount == 0)
        #expect(list.downloadList.isEmpty)
    }

    // MARK: incremental placement

    @Test func newTasksInAddTimeModeKeepTheOrderInBothDirections() throws {
        for order in ListSortOrder.allCases {
            var list = Fixtures.list(order: order, sectioning: .addTime)
            var expected: [String] = []
            for index in 0..<20 {
                let new = item("t\(index)", added: now + Double(index))
                try expectChange(&list) { try $0.add([new]) }
                expected.append(new.url)
            }
            #expect(list.downloadList == [order == .ascending ? expected : expected.reversed()])
        }
    }

    @Test func olderTasksAreMergedIntoTheirPlace() throws {
        var list = Fixtures.list(sectioning: .addTime)
        try list.add((0..<10).map { item("t\($0)", added: now - Double(100 - $0)) })
        let change = try expectChange(&list) {
            try $0.add([
                item("early", added: now - 1000), item("middle", added: now - 95), item("week", added: now - 4 * day),
            ])
        }
        #expect(change.insertedSections == [0])
        // "middle" was added at t5's time, after it: it follows t5.
        #expect(change.insertedItems == [ListIndexPath(section: 1, item: 0), ListIndexPath(section: 1, item: 7)])
        #expect(
            names(list) == [["week"], ["early", "t0", "t1", "t2", "t3", "t4", "t5", "middle", "t6", "t7", "t8", "t9"]])
    }

    @Test(arguments: [ListSortType.fileName, .fileSize, .fileType])
    func longNamesThatShareLongPrefixesSortExactly(type: ListSortType) throws {
        var generator = SeededRandom(seed: 11)
        let stems = ["A very long shared prefix for every name", "a very long shared prefix", "Épisode", "IMG_"]
        let items = (0..<600).map { index in
            let stem = stems[Int.random(in: 0..<stems.count, using: &generator)]
            let name =
                "\(stem) \(Int.random(in: 0..<40, using: &generator)) part \(Int.random(in: 0..<3, using: &generator))"
            return item(name, size: Int64.random(in: -1...3, using: &generator), url: "u\(index)")
        }
        var list = Fixtures.list()
        try list.add(items)
        list.sortListBy(type: type)
        func precedes(_ a: ListItem, _ b: ListItem) -> Bool {
            let names = FileNameKey.compare(FileNameKey(a.fileName), FileNameKey(b.fileName))
            if type == .fileSize, a.fileSize != b.fileSize { return a.fileSize < b.fileSize }
            if names != 0 { return names < 0 }
            if a.fileSize != b.fileSize { return a.fileSize < b.fileSize }
            if a.fileName != b.fileName {
                return Array(a.fileName.utf8).lexicographicallyPrecedes(Array(b.fileName.utf8))
            }
            return Array(a.url.utf8).lexicographicallyPrecedes(Array(b.url.utf8))
        }
        #expect(list.downloadList.joined().map { $0 } == items.sorted(by: precedes).map(\.url))
    }
}
