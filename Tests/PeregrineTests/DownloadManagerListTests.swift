import Foundation
import Peregrine
import PeregrineCore
import Testing

@Suite struct DownloadManagerListTests {
    @Test func sortTypesAndSectioning() throws {
        let h = try ManagerHarness()
        let names = ["b10.mp3", "a2.pdf", "C1.jpg", "b9.mp4"]
        let urls = names.enumerated().map { index, name in
            h.serve("/\(name)", count: Int64(1000 * (index + 1)))
            return h.url("/\(name)")
        }
        try h.manager.download(urls)
        h.runUntilIdle()
        h.manager.sortListBy(type: .fileName)
        #expect(h.manager.downloadList == [[urls[1], urls[3], urls[0], urls[2]]])
        #expect(h.manager.sectionTitles == ["Sorted by File Name"])
        h.manager.indexingFileNameList = true
        #expect(h.manager.sectionTitles == ["A", "B", "C"])
        h.manager.sortListBy(type: .fileSize, order: .descending)
        #expect(h.manager.downloadList == [urls.reversed()])
        h.manager.sortListBy(type: .fileType)
        // Served as application/octet-stream: SDE's MIME refinement makes audio and video "Other".
        #expect(h.manager.sectionTitles == ["Image", "Document", "Other"])
        #expect(h.manager.fileType(ofTask: urls[0]) == "Other")
        #expect(h.manager.fileType(at: ListIndexPath(section: 0, item: 0)) == "Image")
        h.manager.sortListBy(type: .manual)
        #expect(h.manager.sortType == .manual)
        #expect(h.manager.sectionTitles == [DownloadList.placeholderTitle])
        #expect(h.snapshot.lists[""]?.sortType == "manual")
    }

    @Test func addTimeSectionsUseTheListClock() throws {
        let h = try ManagerHarness()
        try h.manager.download(h.serveFiles(2))
        #expect(h.manager.sectionTitles == ["Sorted by Add Time"])
        h.manager.sectioningAddTimeList = true
        #expect(h.manager.sectioningAddTimeList)
        #expect(h.manager.sectionTitles == ["Today"])
        h.manager.sectioningAddTimeList = false
        #expect(h.manager.sectionTitles == ["Sorted by Add Time"])
        #expect(h.snapshot.lists[""]?.sectioning == 0)
    }

    @Test func customSortClosuresMayQueryTheManager() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(4)
        try h.manager.download(urls)
        let singers = ["Bo", "Al", "Bo", nil]
        for (url, singer) in zip(urls, singers) {
            var info: [String: Any] = ["year": 2000 + urls.firstIndex(of: url)!]
            if let singer { info["singer"] = singer }
            try h.manager.updateMetaInfo(info, forTask: url)
        }
        let manager = h.manager
        try manager.sortListBy(
            order: .ascending,
            taskTrait: { manager.info(ofTask: $0, about: "singer") as? String },
            taskAscending: {
                (manager.info(ofTask: $0, about: "year") as! Int)
                    > (manager.info(ofTask: $1, about: "year") as! Int)
            })
        #expect(h.manager.sortType == .manual)
        #expect(h.manager.sectionTitles == ["Al", "Bo", DownloadList.placeholderTitle])
        #expect(h.manager.downloadList == [[urls[1]], [urls[2], urls[0]], [urls[3]]])
        #expect(throws: DownloadManagerError.self) {
            try manager.sortListBy(order: .ascending, taskAscending: { _, _ in true })
        }
        #expect(h.manager.downloadList == [[urls[1]], [urls[2], urls[0]], [urls[3]]])
    }

    /// A list changed while a custom sort's closures ran (here by the closure itself, which may
    /// call the manager) is not sorted: the documented `.concurrentModification` is thrown and
    /// the change that came meanwhile stays.
    @Test func aCustomSortThatRacesAnAdditionThrowsConcurrentModification() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(3)
        try h.manager.download(Array(urls[0..<2]))
        let before = h.manager.downloadList
        let manager = h.manager
        let added = Shared(false)
        do {
            try manager.sortListBy(
                order: .ascending,
                taskAscending: { first, second in
                    if !added.withLock({ $0 }) {
                        added.withLock { $0 = true }
                        _ = try? manager.download(urls[2])
                    }
                    return first < second
                })
            Issue.record("the sort did not see the addition")
        } catch {
            #expect(error.code == .concurrentModification, "\(error)")
        }
        #expect(h.manager.sortType != .manual, "the list was switched to the custom sort")
        #expect(h.manager.downloadList.joined().sorted() == urls.sorted())
        #expect(before.joined().allSatisfy { h.manager.downloadList.joined().contains($0) })
    }

    @Test func manualMovesAndTitles() throws {
        let h = try ManagerHarness(manualMode: true)
        let urls = h.serveFiles(3)
        try h.manager.download(Array(urls[0..<2]), inManualModeAtSection: 0, withTitle: "One")
        try h.manager.download([urls[2]], inManualModeAtSection: 1, withTitle: "Two")
        try h.manager.moveTask(at: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 1, item: 1))
        #expect(h.manager.downloadList == [[urls[1]], [urls[2], urls[0]]])
        try h.manager.moveTasks(inSection: 1, to: 0)
        #expect(h.manager.sectionTitles == ["Two", "One"])
        try h.manager.changeTitleOfSection(1, to: "Uno")
        #expect(h.manager.sectionTitles == ["Two", "Uno"])
        #expect(throws: DownloadManagerError.self) { try h.manager.changeTitleOfSection(1, to: "") }
        #expect(throws: DownloadManagerError.self) { try h.manager.changeTitleOfSection(5, to: "X") }
        #expect(throws: DownloadManagerError.self) {
            try h.manager.moveTask(at: ListIndexPath(section: 0, item: 9), to: ListIndexPath(section: 0, item: 0))
        }
        #expect(throws: DownloadManagerError.self) { try h.manager.moveTasks(inSection: 0, to: 4) }
        try h.manager.deleteTasksInSection(1)
        #expect(h.manager.downloadList == [[urls[2], urls[0]], []])
        try h.manager.removeEmptySection(1)
        #expect(h.manager.sectionCount == 1)
        h.manager.sortListBy(type: .addTime)
        #expect(throws: DownloadManagerError.self) { try h.manager.moveTasks(inSection: 0, to: 0) }
        #expect(h.snapshot.lists[""]?.sortType == "addTime")
    }

    @Test func listChangesAreAnnounced() async throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(2)
        try h.manager.download(urls)
        await h.recorder.wait { events in
            events.contains {
                if case .listChanged(.default, let change) = $0 {
                    return change.insertedSections == [0] || change.insertedItems.count == 2
                }
                return false
            }
        }
    }

    @Test func scopesKeepTheirOwnLists() throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(3)
        try h.manager.download([urls[0]])
        try h.manager.download([urls[1], urls[2]], in: "pdf")
        h.manager.setMaxDownloadCount(1, in: "pdf")
        #expect(h.manager.lists == [.default, "pdf"])
        #expect(h.manager.list("pdf").downloadList == [[urls[1], urls[2]]])
        #expect(h.manager.downloadList == [[urls[0]]])
        #expect(h.manager.indexPath(ofTask: urls[2]) == ListIndexPath(section: 0, item: 1))
        #expect(try h.manager.pauseTasks(at: [ListIndexPath(section: 0, item: 0)], in: "pdf").count == 1)
        #expect(h.state(urls[1]) == .paused)
    }
}

extension DownloadManagerListTests {
    /// A batch is listed in the order it was given, whatever its URLs' alphabetical order, in
    /// the default sort (time added), and after sorting by time added again; later additions
    /// follow it.
    @Test func aBatchIsListedInTheOrderGiven() throws {
        let h = try ManagerHarness()
        let names = ["zeta.bin", "alpha.bin", "mid.bin", "beta.bin", "omega.bin"]
        let urls = names.map { name in
            h.serve("/\(name)", count: 100)
            return h.url("/\(name)")
        }
        try h.manager.download(urls)
        #expect(h.manager.downloadList.flatMap { $0 } == urls)
        let later = h.url("/later.bin")
        h.serve("/later.bin", count: 100)
        try h.manager.download([later])
        #expect(h.manager.downloadList.flatMap { $0 } == urls + [later])
        h.runUntilIdle()
        h.manager.sortListBy(type: .addTime)
        #expect(h.manager.downloadList.flatMap { $0 } == urls + [later])
        h.manager.sortListBy(type: .addTime, order: .descending)
        #expect(h.manager.downloadList.flatMap { $0 } == [later] + urls.reversed())
    }
}
