import Foundation
import Peregrine
import Testing

@Suite struct DownloadManagerAddingTests {
    @Test func downloadInPredefinedModeReturnsLocationsAndStarts() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(3)
        let locations = try h.manager.download(urls)
        #expect(locations == [0, 1, 2].map { ListIndexPath(section: 0, item: $0) })
        #expect(h.manager.downloadList == [urls])
        #expect(h.manager.sectionTitles == ["Sorted by Add Time"])
        for url in urls { #expect(h.state(url) == .downloading) }
        h.runUntilIdle()
        for url in urls {
            #expect(h.state(url) == .finished)
            #expect(h.manager.isFileExisted(ofTask: url))
        }
    }

    @Test func repeatedAndInvalidURLsAreLeftOut() throws {
        let h = try ManagerHarness()
        let first = h.url("/a.bin")
        let result = try h.manager.download(
            [DownloadItem(first), DownloadItem("HTTP://MOCK.TEST:80/a.bin"), DownloadItem("not a url")])
        #expect(result.addition.added == [first])
        #expect(result.addition.duplicates.map(\.urlString) == ["HTTP://MOCK.TEST:80/a.bin"])
        #expect(result.addition.invalid.map(\.urlString) == ["not a url"])
        #expect(result.locations == [ListIndexPath(section: 0, item: 0)])
        #expect(try h.manager.download([first]).isEmpty)
        #expect(h.manager.downloadList == [[first]])
    }

    @Test func addingInAnotherPredefinedTypeSwitchesToAddTime() throws {
        let h = try ManagerHarness()
        h.manager.sortListBy(type: .fileName, order: .descending)
        #expect(h.manager.sortType == .fileName)
        try h.manager.download([h.url("/x.bin")])
        #expect(h.manager.sortType == .addTime)
    }

    @Test func predefinedDownloadInManualModeThrowsAndAddsNothing() throws {
        let h = try ManagerHarness(manualMode: true)
        let url = h.url("/a.bin")
        #expect(throws: DownloadManagerError.self) { try h.manager.download([url]) }
        #expect(h.manager.engine.task(url) == nil)
        #expect(h.manager.downloadList.isEmpty)
    }

    @Test func manualModeInsertsSectionsAndLocations() throws {
        let h = try ManagerHarness(manualMode: true)
        #expect(h.manager.sortType == .manual)
        let urls = h.serveFiles(6)
        #expect(
            try h.manager.download(Array(urls[0..<2]), inManualModeAtSection: 0, withTitle: "Songs")
                == [ListIndexPath(section: 0, item: 0), ListIndexPath(section: 0, item: 1)])
        try h.manager.insertPlaceholderSectionInManualMode(atSection: 1, withTitle: "Films")
        #expect(h.manager.sectionTitles == ["Songs", "Films"])
        #expect(h.manager.taskCount(inSection: 1) == 0)
        #expect(
            try h.manager.download([urls[2]], inManualModeAt: ListIndexPath(section: 1, item: 0))
                == [ListIndexPath(section: 1, item: 0)])
        let sections = try h.manager.download(
            [[urls[3]], [urls[4], urls[5]]], inManualModeAtSection: 0, withTitles: ["A", "B"])
        #expect(sections == [0, 1])
        #expect(h.manager.sectionTitles == ["A", "B", "Songs", "Films"])
        #expect(h.manager.downloadList == [[urls[3]], [urls[4], urls[5]], [urls[0], urls[1]], [urls[2]]])
        #expect(h.manager.titleForHeader(inSection: 3) == "Films")
        #expect(h.manager.titleForHeader(inSection: 4) == nil)
        #expect(h.manager.taskCount(inSection: 9) == nil)
    }

    @Test func badManualInsertionsThrowAndAddNothing() throws {
        let h = try ManagerHarness(manualMode: true)
        let url = h.url("/a.bin")
        #expect(throws: DownloadManagerError.self) {
            try h.manager.download([url], inManualModeAtSection: 3, withTitle: "T")
        }
        #expect(throws: DownloadManagerError.self) {
            try h.manager.download([url], inManualModeAtSection: 0, withTitle: "")
        }
        #expect(throws: DownloadManagerError.self) {
            try h.manager.download([url], inManualModeAt: ListIndexPath(section: 0, item: 0))
        }
        #expect(throws: DownloadManagerError.self) {
            try h.manager.download([[url]], inManualModeAtSection: 0, withTitles: [])
        }
        #expect(h.manager.engine.task(url) == nil)
        #expect(h.manager.downloadList.isEmpty)
        let predefined = try ManagerHarness()
        #expect(throws: DownloadManagerError.self) {
            try predefined.manager.download([url], inManualModeAtSection: 0, withTitle: "T")
        }
    }

    @Test func downloadNewFileImmediatelyOffOnlyAddsTasks() throws {
        let h = try ManagerHarness { $0.downloadNewFileImmediately = false }
        let urls = h.serveFiles(2)
        try h.manager.download(urls)
        for url in urls { #expect(h.state(url) == .pending) }
        #expect(try h.manager.resumeTasks(urls) == urls)
        h.runUntilIdle()
        for url in urls { #expect(h.state(url) == .finished) }
    }

    @Test func subscriptsMapURLsAndLocations() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(2)
        try h.manager.download(urls)
        #expect(h.manager[urls[1]] == ListIndexPath(section: 0, item: 1))
        #expect(h.manager[ListIndexPath(section: 0, item: 0)] == urls[0])
        #expect(h.manager[ListIndexPath(section: 0, item: 2)] == nil)
        #expect(h.manager["http://mock.test/unknown"] == nil)
        #expect(h.manager.downloadTaskSet == Set(urls))
        #expect(h.manager.unfinishedList.count == 2)
    }
}
