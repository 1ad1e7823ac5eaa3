import Foundation
import PeregrineSorting
import Testing

@Suite struct BadInputTests {
    let url = { (name: String) in "https://example.com/\(name)" }

    /// Runs a mutation that must throw `code` and leave the list exactly as it was.
    func expectRefusal(
        _ code: DownloadListError.Code,
        on list: DownloadList,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ mutation: (inout DownloadList) throws -> ListChange
    ) {
        var copy = list
        do {
            _ = try mutation(&copy)
            Issue.record("expected \(code), the mutation succeeded", sourceLocation: sourceLocation)
        } catch let error as DownloadListError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected a DownloadListError, got \(error)", sourceLocation: sourceLocation)
        }
        #expect(copy.state == list.state, sourceLocation: sourceLocation)
        #expect(ShownList(copy) == ShownList(list), sourceLocation: sourceLocation)
    }

    func manualList() throws -> DownloadList {
        var list = Fixtures.list(.manual)
        try list.insert([item("a"), item("b")], atSection: 0, title: "One")
        try list.insert([item("c")], atSection: 1, title: "Two")
        try list.insert([item("t")], atSection: 2, title: "Three")
        try list.remove([url("t")], moveToTrash: true)
        return list
    }

    func predefinedList() throws -> DownloadList {
        var list = Fixtures.list(sectioning: .fileSize)
        try list.add([item("a", size: 1), item("b", size: 2), item("c", size: 3_000_000), item("t")])
        try list.remove([url("t")], moveToTrash: true)
        list.sortListBy(type: .fileSize)
        return list
    }

    @Test func outOfBoundsQueriesAnswerNil() throws {
        let list = try manualList()
        #expect(list.taskCountInSection(-1) == nil)
        #expect(list.taskCountInSection(3) == nil)
        #expect(list.titleForHeaderInSection(3) == nil)
        #expect(list[ListIndexPath(section: 0, item: 2)] == nil)
        #expect(list[ListIndexPath(section: -1, item: 0)] == nil)
        #expect(list[ListIndexPath(section: 0, item: -1)] == nil)
        #expect(list[ListIndexPath(section: 9, item: 0)] == nil)
        #expect(list["https://nowhere.example/x"] == nil)
        #expect(list.item(for: "https://nowhere.example/x") == nil)
        #expect(throws: DownloadListError.self) { try list.tasks(inSection: 3) }
        #expect(throws: DownloadListError.self) { try list.tasks(at: [ListIndexPath(section: 0, item: 5)]) }
        #expect(throws: DownloadListError.self) { try list.trashURLs(at: [1]) }
    }

    @Test func outOfBoundsSectionsAndIndexPathsAreRefused() throws {
        let list = try manualList()
        expectRefusal(.sectionOutOfBounds, on: list) { try $0.insertPlaceholderSection(at: 4, title: "X") }
        expectRefusal(.sectionOutOfBounds, on: list) { try $0.insertPlaceholderSection(at: -1, title: "X") }
        expectRefusal(.sectionOutOfBounds, on: list) { try $0.insert([item("n")], atSection: 4, title: "X") }
        expectRefusal(.indexPathOutOfBounds, on: list) {
            try $0.insert([item("n")], at: ListIndexPath(section: 0, item: 3))
        }
        expectRefusal(.indexPathOutOfBounds, on: list) {
            try $0.insert([item("n")], at: ListIndexPath(section: 3, item: 0))
        }
        expectRefusal(.indexPathOutOfBounds, on: list) {
            try $0.moveTask(at: ListIndexPath(section: 0, item: 2), to: ListIndexPath(section: 0, item: 0))
        }
        expectRefusal(.indexPathOutOfBounds, on: list) {
            try $0.moveTask(at: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 0, item: 2))
        }
        expectRefusal(.indexPathOutOfBounds, on: list) {
            try $0.moveTask(at: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 1, item: 2))
        }
        expectRefusal(.indexPathOutOfBounds, on: list) {
            try $0.moveTask(at: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 5, item: 0))
        }
        expectRefusal(.sectionOutOfBounds, on: list) { try $0.moveTasks(inSection: 3, to: 0) }
        expectRefusal(.sectionOutOfBounds, on: list) { try $0.moveTasks(inSection: 0, to: 3) }
        expectRefusal(.sectionOutOfBounds, on: list) { try $0.changeTitleOfSection(7, to: "X") }
        expectRefusal(.sectionOutOfBounds, on: list) { try $0.removeEmptySection(-2) }
        expectRefusal(.sectionOutOfBounds, on: list) { try $0.removeTasks(inSection: 3, moveToTrash: true) }
        expectRefusal(.indexPathOutOfBounds, on: list) {
            try $0.remove(
                at: [ListIndexPath(section: 0, item: 0), ListIndexPath(section: 1, item: 1)], moveToTrash: true)
        }
        expectRefusal(.indexPathOutOfBounds, on: list) {
            try $0.restoreFromTrash([url("t")], to: ListIndexPath(section: 1, item: 2))
        }
        expectRefusal(.trashIndexOutOfBounds, on: list) { try $0.restoreFromTrash(at: [1]) }
        expectRefusal(.trashIndexOutOfBounds, on: list) { try $0.removeFromTrash(at: [-1]) }
    }

    @Test func manualOperationsInAPredefinedModeAreRefused() throws {
        let list = try predefinedList()
        expectRefusal(.requiresManualMode, on: list) {
            try $0.moveTask(at: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 0, item: 1))
        }
        expectRefusal(.requiresManualMode, on: list) { try $0.moveTasks(inSection: 0, to: 1) }
        expectRefusal(.requiresManualMode, on: list) { try $0.changeTitleOfSection(0, to: "X") }
        expectRefusal(.requiresManualMode, on: list) { try $0.insertPlaceholderSection(at: 0, title: "X") }
        expectRefusal(.requiresManualMode, on: list) { try $0.insert([item("n")], atSection: 0, title: "X") }
        expectRefusal(.requiresManualMode, on: list) {
            try $0.insert([item("n")], at: ListIndexPath(section: 0, item: 0))
        }
        expectRefusal(.requiresManualMode, on: list) { try $0.removeEmptySection(0) }
    }

    @Test func addingWithoutALocationInManualModeIsRefused() throws {
        let list = try manualList()
        expectRefusal(.requiresPredefinedMode, on: list) { try $0.add([item("n")]) }
    }

    @Test func emptyTitlesAreRefused() throws {
        let list = try manualList()
        expectRefusal(.emptyTitle, on: list) { try $0.insertPlaceholderSection(at: 0, title: "") }
        expectRefusal(.emptyTitle, on: list) { try $0.insert([item("n")], atSection: 0, title: "") }
        expectRefusal(.emptyTitle, on: list) {
            try $0.insert(sections: [[item("n")], [item("m")]], titles: ["A", ""], atSection: 0)
        }
        expectRefusal(.emptyTitle, on: list) { try $0.changeTitleOfSection(0, to: "") }
        expectRefusal(.titleCountMismatch, on: list) {
            try $0.insert(sections: [[item("n")], [item("m")]], titles: ["A"], atSection: 0)
        }
    }

    @Test func unknownURLsAreRefused() throws {
        for list in [try manualList(), try predefinedList()] {
            expectRefusal(.unknownURL, on: list) { try $0.remove([url("a"), url("nope")], moveToTrash: true) }
            expectRefusal(.unknownURL, on: list) { try $0.remove([url("t")], moveToTrash: false) }
            expectRefusal(.unknownURL, on: list) { try $0.update([item("a", size: 9), item("nope")]) }
            expectRefusal(.unknownURL, on: list) { try $0.restoreFromTrash([url("a")]) }
            expectRefusal(.unknownURL, on: list) { try $0.restoreFromTrash([url("t"), url("nope")]) }
            expectRefusal(.unknownURL, on: list) { try $0.removeFromTrash([url("a")]) }
        }
    }

    @Test func removingANonEmptySectionIsRefused() throws {
        let list = try manualList()
        expectRefusal(.sectionNotEmpty, on: list) { try $0.removeEmptySection(0) }
    }

    @Test func errorsSayWhatWasWrong() {
        let error = DownloadListError(.sectionOutOfBounds, String(repeating: "x", count: 400))
        #expect(error.message.count == 301)
        #expect(error.description.hasPrefix("section out of bounds: "))
    }
}
