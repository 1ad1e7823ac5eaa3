import Foundation
import PeregrineSorting
import Testing

@Suite struct UpdateTests {
    let url = { (name: String) in "https://example.com/\(name)" }

    @Test func aKnownSizeMovesTheTaskToItsPlace() throws {
        var list = Fixtures.list()
        try list.add([item("a", size: 10), item("b", size: 20), item("c", size: 30)])
        list.sortListBy(type: .fileSize)
        let change = try expectChange(&list) { try $0.update(item("a", size: 25)) }
        #expect(
            change.movedItems == [
                ListChange.Move(from: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 0, item: 1))
            ])
        #expect(names(list) == [["b", "a", "c"]])
    }

    @Test func aTaskThatStaysPutMovesNothing() throws {
        var list = Fixtures.list()
        try list.add([item("a", size: 10), item("b", size: 20)])
        list.sortListBy(type: .fileSize)
        #expect(try list.update(item("a", size: 11)).isEmpty)
        #expect(
            try list.update(item("a", size: 11, kind: .video, finished: true)).isEmpty, "kind does not sort fileSize")
        #expect(list.item(for: url("a"))?.kind == .video)
    }

    @Test func aTaskCanMoveIntoANewSectionAndEmptyItsOldOne() throws {
        var list = Fixtures.list(sectioning: .fileSize)
        try list.add([item("a", size: -1), item("b", size: 10)])
        list.sortListBy(type: .fileSize)
        #expect(list.sectionTitles == ["Unknown Size", "0 ~ 1 MB"])
        let change = try expectChange(&list) { try $0.update(item("a", size: 2_000_000_000)) }
        #expect(change.deletedSections == [0])
        #expect(change.insertedSections == [1])
        #expect(list.sectionTitles == ["0 ~ 1 MB", "Larger Than 1 GB"])
    }

    @Test func aRenameMovesTheTaskBetweenIndexSections() throws {
        var list = Fixtures.list(sectioning: .fileNameIndex)
        try list.add([item("download.bin", url: "u1"), item("apple", url: "u2"), item("avocado", url: "u3")])
        list.sortListBy(type: .fileName, order: .descending)
        #expect(list.sectionTitles == ["D", "A"])
        try expectChange(&list) { try $0.update(ListItem(url: "u1", fileName: "Zebra.mkv", addTime: Fixtures.noon)) }
        #expect(list.sectionTitles == ["Z", "A"])
        try expectChange(&list) { try $0.update(ListItem(url: "u3", fileName: "aardvark", addTime: Fixtures.noon)) }
        #expect(names(list) == [["Zebra.mkv"], ["apple", "aardvark"]])
    }

    @Test func severalUpdatesAtOnceDescribeEveryMove() throws {
        var list = Fixtures.list()
        try list.add((0..<8).map { item("t\($0)", size: Int64($0)) })
        list.sortListBy(type: .fileSize, order: .descending)
        try expectChange(&list) {
            try $0.update([item("t0", size: 100), item("t7", size: -5), item("t3", size: 3), item("t4", size: 2)])
        }
        #expect(names(list) == [["t0", "t6", "t5", "t3", "t4", "t2", "t1", "t7"]])
    }

    @Test func inManualModeAndInTheTrashTasksStayPut() throws {
        var list = Fixtures.list(.manual)
        try list.insert([item("a", size: 1), item("b", size: 2)], atSection: 0, title: "T")
        #expect(try list.update(item("a", size: 99)).isEmpty)
        #expect(names(list) == [["a", "b"]])
        try list.remove([url("b")], moveToTrash: true)
        #expect(try list.update(item("b", size: 5)).isEmpty)
        #expect(list.item(for: url("b"))?.fileSize == 5)
    }

    @Test func anUpdateOnALaterDaySortsAgain() throws {
        let clock = ManualClock(Fixtures.noon)
        var list = Fixtures.list(sectioning: .addTime, clock: clock)
        try list.add([item("a"), item("b")])
        clock.advance(by: 2 * Fixtures.day)
        #expect(try list.update(item("a", added: Fixtures.noon - 1)).isReload)
        #expect(list.sectionTitles == ["Last 7 Days"])
    }
}
