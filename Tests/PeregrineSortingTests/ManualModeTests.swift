import Foundation
import PeregrineSorting
import Testing

@Suite struct ManualModeTests {
    func manualList() throws -> DownloadList {
        var list = Fixtures.list(.manual)
        try list.insert([item("a1"), item("a2"), item("a3")], atSection: 0, title: "Music")
        try list.insert([item("b1"), item("b2")], atSection: 1, title: "Movies")
        return list
    }

    @Test func insertingAtASectionMakesATitledSection() throws {
        var list = Fixtures.list(.manual)
        let change = try expectChange(&list) { try $0.insert([item("a"), item("b")], atSection: 0, title: "Work") }
        #expect(change.insertedSections == [0])
        #expect(names(list) == [["a", "b"]])
        #expect(list.sectionTitles == ["Work"])
        try expectChange(&list) { try $0.insert([item("c")], atSection: 0, title: "Home") }
        #expect(list.sectionTitles == ["Home", "Work"])
        #expect(list.titleForHeaderInSection(1) == "Work")
        #expect(list.titleForHeaderInSection(2) == nil)
    }

    @Test func insertingSeveralSectionsSkipsEmptyGroupsAndDuplicates() throws {
        var list = try manualList()
        let change = try expectChange(&list) {
            try $0.insert(
                sections: [[item("x")], [item("a1")], [item("y"), item("y")]], titles: ["X", "dup", "Y", "extra"],
                atSection: 1)
        }
        #expect(change.insertedSections == [1, 2])
        #expect(list.sectionTitles == ["Music", "X", "Y", "Movies"])
        #expect(names(list) == [["a1", "a2", "a3"], ["x"], ["y"], ["b1", "b2"]])
    }

    @Test func insertingAtAnIndexPathKeepsTheGivenOrder() throws {
        var list = try manualList()
        let change = try expectChange(&list) {
            try $0.insert([item("n1"), item("n2")], at: ListIndexPath(section: 0, item: 1))
        }
        #expect(change.insertedItems == [ListIndexPath(section: 0, item: 1), ListIndexPath(section: 0, item: 2)])
        #expect(names(list)[0] == ["a1", "n1", "n2", "a2", "a3"])
        try expectChange(&list) { try $0.insert([item("end")], at: ListIndexPath(section: 1, item: 2)) }
        #expect(names(list)[1] == ["b1", "b2", "end"])
        #expect(list[ListIndexPath(section: 1, item: 2)] == "https://example.com/end")
        #expect(list["https://example.com/a2"] == ListIndexPath(section: 0, item: 3))
    }

    @Test func placeholderSectionsAreEmptyAndTitled() throws {
        var list = try manualList()
        let change = try expectChange(&list) { try $0.insertPlaceholderSection(at: 2, title: "Later") }
        #expect(change.insertedSections == [2])
        #expect(list.taskCountInSection(2) == 0)
        #expect(list.sectionTitles == ["Music", "Movies", "Later"])
        try expectChange(&list) { try $0.insert([item("z")], at: ListIndexPath(section: 2, item: 0)) }
        #expect(names(list)[2] == ["z"])
    }

    @Test func movingATaskWithinItsSection() throws {
        var list = try manualList()
        let change = try expectChange(&list) {
            try $0.moveTask(at: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 0, item: 2))
        }
        #expect(
            change.movedItems == [
                ListChange.Move(from: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 0, item: 2))
            ])
        #expect(names(list)[0] == ["a2", "a3", "a1"])
        try expectChange(&list) {
            try $0.moveTask(at: ListIndexPath(section: 0, item: 2), to: ListIndexPath(section: 0, item: 0))
        }
        #expect(names(list)[0] == ["a1", "a2", "a3"])
        #expect(
            try list.moveTask(at: ListIndexPath(section: 0, item: 1), to: ListIndexPath(section: 0, item: 1)).isEmpty)
    }

    @Test func movingATaskToAnotherSectionMayEmptyItsOwn() throws {
        var list = Fixtures.list(.manual)
        try list.insert([item("a")], atSection: 0, title: "A")
        try list.insert([item("b")], atSection: 1, title: "B")
        try expectChange(&list) {
            try $0.moveTask(at: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 1, item: 1))
        }
        #expect(names(list) == [[], ["b", "a"]])
        #expect(list.sectionTitles == ["A", "B"])
        #expect(list["https://example.com/a"] == ListIndexPath(section: 1, item: 1))
    }

    @Test func movingASectionCarriesItsTitleAndTasks() throws {
        var list = try manualList()
        try list.insertPlaceholderSection(at: 2, title: "Empty")
        let change = try expectChange(&list) { try $0.moveTasks(inSection: 0, to: 2) }
        #expect(change.movedSections == [ListChange.SectionMove(from: 0, to: 2)])
        #expect(list.sectionTitles == ["Movies", "Empty", "Music"])
        #expect(names(list) == [["b1", "b2"], [], ["a1", "a2", "a3"]])
        #expect(list["https://example.com/a3"] == ListIndexPath(section: 2, item: 2))
        #expect(list["https://example.com/b1"] == ListIndexPath(section: 0, item: 0))
    }

    @Test func changingASectionTitle() throws {
        var list = try manualList()
        let change = try expectChange(&list) { try $0.changeTitleOfSection(1, to: "Films") }
        #expect(change.retitledSections == [1])
        #expect(list.sectionTitles == ["Music", "Films"])
    }

    @Test func removingAnEmptySection() throws {
        var list = try manualList()
        try list.removeTasks(inSection: 1, moveToTrash: false)
        #expect(list.sectionTitles == ["Music", "Movies"], "manual sections stay when emptied")
        try expectChange(&list) { try $0.removeEmptySection(1) }
        #expect(list.sectionTitles == ["Music"])
    }

    // MARK: mode switches

    @Test func switchingToAPredefinedTypeDropsTitles() throws {
        var list = try manualList()
        try list.insertPlaceholderSection(at: 0, title: "Empty")
        let change = list.sortListBy(type: .fileName)
        #expect(change.isReload)
        #expect(list.sortType == .fileName)
        #expect(list.sectionTitles == ["Sorted by File Name"])
        #expect(names(list) == [["a1", "a2", "a3", "b1", "b2"]])
    }

    @Test func switchingToManualMergesIntoOnePlaceholderSectionInShownOrder() throws {
        var list = Fixtures.list(sectioning: .fileSize)
        try list.add([item("a", size: 5), item("b", size: 5_000_000), item("c", size: 7)])
        list.sortListBy(type: .fileSize, order: .descending)
        #expect(list.sectionCount == 2)
        list.sortListBy(type: .manual)
        #expect(list.sortType == .manual)
        #expect(list.sectionTitles == [DownloadList.placeholderTitle])
        #expect(list.sectionTitles == ["Title"])
        #expect(names(list) == [["b", "c", "a"]])
        #expect(list.sortListBy(type: .manual, order: .descending).isEmpty)
    }

    @Test func switchingAnEmptyListToManualMakesNoSection() {
        var list = Fixtures.list()
        list.sortListBy(type: .manual)
        #expect(list.sectionCount == 0)
    }

    @Test func addingInAPredefinedModeSwitchesToAddTime() throws {
        var list = Fixtures.list()
        try list.add([item("b", added: Fixtures.noon - 5), item("a", added: Fixtures.noon - 10)])
        list.sortListBy(type: .fileName, order: .descending)
        #expect(names(list) == [["b", "a"]])
        let change = try list.add([item("c", added: Fixtures.noon)])
        #expect(change.isReload)
        #expect(list.sortType == .addTime)
        #expect(list.sortOrder == .descending)
        #expect(names(list) == [["c", "b", "a"]])
    }

    @Test func addingAnExistingURLIsSkipped() throws {
        var list = Fixtures.list()
        try list.add([item("a")])
        try list.remove(["https://example.com/a"], moveToTrash: true)
        try list.add([item("b")])
        let change = try list.add([item("a"), item("b"), item("c"), item("c")])
        #expect(change.insertedItems == [ListIndexPath(section: 0, item: 1)])
        #expect(list.count == 2)
        #expect(list.toDeleteList == ["https://example.com/a"])
    }
}
