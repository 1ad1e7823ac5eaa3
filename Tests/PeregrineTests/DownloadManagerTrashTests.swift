import Foundation
import Peregrine
import Testing

@Suite struct DownloadManagerTrashTests {
    @Test func deletingWithTheTrashOpenKeepsTasksNewestFirst() async throws {
        let h = try ManagerHarness { $0.isTrashOpened = true }
        let urls = h.serveFiles(4, size: 100_000)
        try h.manager.download(urls)
        h.runUntilIdle()
        try h.manager.download([h.serveFiles(1, size: 100_000, prefix: "late")[0]])
        let late = h.url("/late0.bin")
        #expect(try h.manager.deleteTasks([urls[0]]) == [urls[0]: ListIndexPath(section: 0, item: 0)])
        #expect(try h.manager.deleteTasks([late]).count == 1)
        #expect(h.state(late) == .stopped || h.state(late) == .pending)
        #expect(h.manager.toDeleteList == [late, urls[0]])
        #expect(h.manager.allTasksSet.count == 5)
        #expect(h.manager.downloadTaskSet == Set(urls[1...]))
        #expect(h.manager.isFileExisted(ofTask: urls[0]))
        // Trashed tasks are out of reach of list operations until restored.
        #expect(throws: DownloadManagerError.self) { try h.manager.resumeTasks([late]) }
        #expect(!h.manager.resumeAllTasks().contains(late))
        await h.recorder.wait { $0.contains(.trashed([late])) }
    }

    @Test func restoreCleanupAndEmpty() throws {
        let h = try ManagerHarness { $0.isTrashOpened = true }
        let urls = h.serveFiles(5)
        try h.manager.download(urls)
        h.runUntilIdle()
        let keptFile = try #require(h.manager.filePath(ofTask: urls[1]))
        let goneFile = try #require(h.manager.filePath(ofTask: urls[0]))
        try h.manager.deleteTasks([urls[0]])
        try h.manager.deleteTasks([urls[1]], keepFinishedFile: true)
        try h.manager.deleteTasks([urls[2], urls[3], urls[4]])
        #expect(h.manager.toDeleteList == [urls[2], urls[3], urls[4], urls[1], urls[0]])
        #expect(try h.manager.restoreToDeleteTasks([urls[3]]) == [ListIndexPath(section: 0, item: 1)])
        #expect(h.manager.downloadTaskSet == [urls[3]])
        #expect(try h.manager.restoreToDeleteTasks(at: [0]) == [ListIndexPath(section: 0, item: 0)])
        #expect(h.manager.toDeleteList == [urls[4], urls[1], urls[0]])
        let cleaned = try h.manager.cleanupToDeleteTasks([urls[1]])
        #expect(cleaned == [urls[1]: ListIndexPath(section: 0, item: 1)])
        #expect(FileManager.default.fileExists(atPath: keptFile))
        #expect(h.state(urls[1]) == .notInList)
        #expect(try h.manager.cleanupToDeleteTasks(at: [1]) == [urls[0]: ListIndexPath(section: 0, item: 1)])
        #expect(!FileManager.default.fileExists(atPath: goneFile))
        #expect(throws: DownloadManagerError.self) { try h.manager.cleanupToDeleteTasks([urls[3]]) }
        #expect(throws: DownloadManagerError.self) { try h.manager.cleanupToDeleteTasks(at: [4]) }
        #expect(throws: DownloadManagerError.self) { try h.manager.cleanupToDeleteTasks(from: 3) }
        #expect(throws: DownloadManagerError.self) { try h.manager.restoreToDeleteTasks([urls[3]]) }
        #expect(h.manager.toDeleteList == [urls[4]])
        #expect(try h.manager.cleanupToDeleteTasks(from: 0) == [urls[4]: ListIndexPath(section: 0, item: 0)])
        #expect(h.manager.emptyToDeleteList().isEmpty)
        #expect(h.manager.allTasksSet == [urls[2], urls[3]])
    }

    @Test func restoreInManualModeGoesToTheLocation() throws {
        let h = try ManagerHarness(manualMode: true) { $0.isTrashOpened = true }
        let urls = h.serveFiles(4)
        try h.manager.download(Array(urls[0..<2]), inManualModeAtSection: 0, withTitle: "One")
        try h.manager.download(Array(urls[2..<4]), inManualModeAtSection: 1, withTitle: "Two")
        try h.manager.deleteTasks([urls[0], urls[3]])
        #expect(h.manager.downloadList == [[urls[1]], [urls[2]]])
        #expect(
            try h.manager.restoreAllToDeleteTasks(toLocation: ListIndexPath(section: 1, item: 1)).count == 2)
        #expect(h.manager.downloadList == [[urls[1]], [urls[2], urls[0], urls[3]]])
        #expect(h.manager.toDeleteList.isEmpty)
    }
}
