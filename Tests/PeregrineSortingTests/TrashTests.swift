import Foundation
import PeregrineSorting
import Testing

@Suite struct TrashTests {
    let url = { (name: String) in "https://example.com/\(name)" }

    @Test func removedTasksGoToTheTrashNewestFirst() throws {
        var list = Fixtures.list()
        try list.add(["a", "b", "c", "d"].enumerated().map { item($1, added: Fixtures.noon + Double($0)) })
        let change = try expectChange(&list) { try $0.remove([url("c"), url("a")], moveToTrash: true) }
        #expect(change.deletedItems == [ListIndexPath(section: 0, item: 0), ListIndexPath(section: 0, item: 2)])
        #expect(change.insertedTrashIndexes == [0, 1])
        #expect(list.toDeleteList == [url("a"), url("c")])
        try expectChange(&list) { try $0.remove(at: [ListIndexPath(section: 0, item: 1)], moveToTrash: true) }
        #expect(list.toDeleteList == [url("d"), url("a"), url("c")])
        #expect(list.downloadTaskSet == [url("b")])
        #expect(list.allTasksSet == Set(["a", "b", "c", "d"].map(url)))
        #expect(list[url("a")] == nil)
        #expect(list.isInTrash(url("a")) && !list.isInTrash(url("b")))
    }

    @Test func removingForGoodForgetsTheTask() throws {
        var list = Fixtures.list()
        try list.add([item("a"), item("b")])
        try expectChange(&list) { try $0.remove([url("a")], moveToTrash: false) }
        #expect(!list.contains(url("a")))
        #expect(list.toDeleteList.isEmpty)
        try list.add([item("a")])
        #expect(list.contains(url("a")), "a forgotten URL can be added again")
    }

    @Test func removingTheLastTaskOfAPredefinedSectionRemovesTheSection() throws {
        var list = Fixtures.list(sectioning: .fileSize)
        try list.add([item("a", size: 1), item("b", size: 5_000_000), item("c", size: 6_000_000)])
        list.sortListBy(type: .fileSize, order: .descending)
        let change = try expectChange(&list) { try $0.remove([url("a"), url("b")], moveToTrash: true) }
        #expect(change.deletedSections == [1])
        #expect(change.deletedItems == [ListIndexPath(section: 0, item: 1)])
        #expect(list.sectionTitles == ["1 MB ~ 100 MB"])
    }

    @Test func removingASectionsTasks() throws {
        var list = Fixtures.list(.manual)
        try list.insert([item("a"), item("b")], atSection: 0, title: "One")
        try list.insert([item("c")], atSection: 1, title: "Two")
        try expectChange(&list) { try $0.removeTasks(inSection: 0, moveToTrash: true) }
        #expect(names(list) == [[], ["c"]])
        #expect(list.toDeleteList == [url("a"), url("b")])
        expectChange(&list) { $0.removeAll(moveToTrash: true) }
        #expect(list.toDeleteList == [url("c"), url("a"), url("b")])
        #expect(list.sectionTitles == ["One", "Two"])
    }

    @Test func restoringInManualModeGoesToTheLocationInTheGivenOrder() throws {
        var list = Fixtures.list(.manual)
        try list.insert([item("a"), item("b"), item("c"), item("d")], atSection: 0, title: "One")
        try list.remove([url("a"), url("b"), url("c")], moveToTrash: true)
        let change = try expectChange(&list) {
            try $0.restoreFromTrash([url("c"), url("a")], to: ListIndexPath(section: 0, item: 1))
        }
        #expect(change.deletedTrashIndexes == [0, 2])
        #expect(change.insertedItems == [ListIndexPath(section: 0, item: 1), ListIndexPath(section: 0, item: 2)])
        #expect(names(list) == [["d", "c", "a"]])
        #expect(list.toDeleteList == [url("b")])
        try expectChange(&list) { try $0.restoreFromTrash(at: [0]) }
        #expect(names(list) == [["b", "d", "c", "a"]])
    }

    @Test func restoringInAPredefinedModeLetsTheSortPlaceTasks() throws {
        var list = Fixtures.list(sectioning: .fileNameIndex)
        try list.add([item("apple"), item("banana"), item("cherry")])
        list.sortListBy(type: .fileName)
        try list.remove([url("banana"), url("apple")], moveToTrash: true)
        let change = try expectChange(&list) {
            try $0.restoreFromTrash([url("apple"), url("banana")], to: ListIndexPath(section: 9, item: 9))
        }
        #expect(change.insertedSections == [0, 1])
        #expect(list.sectionTitles == ["A", "B", "C"])
        #expect(list.sortType == .fileName, "restoring is not adding: the type stays")
    }

    @Test func cleaningUpTheTrash() throws {
        var list = Fixtures.list()
        try list.add([item("a"), item("b"), item("c")])
        try list.remove([url("a"), url("b"), url("c")], moveToTrash: true)
        let change = try expectChange(&list) { try $0.removeFromTrash(at: [1]) }
        #expect(change.deletedTrashIndexes == [1])
        #expect(list.toDeleteList == [url("a"), url("c")])
        try expectChange(&list) { try $0.removeFromTrash([url("c")]) }
        #expect(list.toDeleteList == [url("a")])
        expectChange(&list) { $0.emptyTrash() }
        #expect(list.toDeleteList.isEmpty)
        #expect(list.allTasksSet.isEmpty)
        #expect(try list.trashURLs(at: []) == [])
    }

    @Test func unfinishedListIsNewestFirstWithoutFinishedOrTrashedTasks() throws {
        var list = Fixtures.list()
        try list.add([
            item("old", added: Fixtures.noon - 100), item("done", added: Fixtures.noon - 50, finished: true),
            item("new", added: Fixtures.noon), item("gone", added: Fixtures.noon - 10),
        ])
        try list.remove([url("gone")], moveToTrash: true)
        #expect(list.unfinishedList == [url("new"), url("old")])
        try list.update(item("new", added: Fixtures.noon, finished: true))
        #expect(list.unfinishedList == [url("old")])
    }
}
