import Foundation
import Peregrine
import Testing

@Suite struct DownloadManagerMetaInfoTests {
    @Test func propertyListValuesKeepTheirTypes() throws {
        let h = try ManagerHarness()
        let url = h.serveFiles(1)[0]
        try h.manager.download([url])
        let date = Date(timeIntervalSince1970: 1234)
        try h.manager.updateMetaInfo(
            [
                "name": "x", "int": 7, "uint8": UInt8(3), "double": 1.5, "float": Float(0.5), "bool": true,
                "date": date, "data": Data([1, 2]), "array": [1, "a"], "dictionary": ["k": [false]],
            ], forTask: url)
        #expect(h.manager.info(ofTask: url, about: "name") as? String == "x")
        #expect(h.manager.info(ofTask: url, about: "int") as? Int == 7)
        #expect(h.manager.info(ofTask: url, about: "uint8") as? Int == 3)
        #expect(h.manager.info(ofTask: url, about: "double") as? Double == 1.5)
        #expect(h.manager.info(ofTask: url, about: "bool") as? Bool == true)
        #expect(h.manager.info(ofTask: url, about: "date") as? Date == date)
        #expect(h.manager.info(ofTask: url, about: "data") as? Data == Data([1, 2]))
        #expect(h.manager.metaInfo(ofTask: url)?["array"] == .array([.integer(1), .string("a")]))
        #expect(h.manager.metaInfo(ofTask: url)?["dictionary"] == .dictionary(["k": .array([.boolean(false)])]))
        #expect(h.manager.info(ofTask: url, about: "absent") == nil)
        #expect(h.snapshot.tasks.first { $0.urlString == url }?.metaInfo["int"] == .integer(7))
        try h.manager.updateMetaInfo(["int": 8], forTask: url)
        #expect(h.manager.info(ofTask: url, about: "int") as? Int == 8)
        #expect(h.manager.info(ofTask: url, about: "name") as? String == "x")
    }

    @Test func nonPropertyListValuesAreRefusedAndChangeNothing() throws {
        let h = try ManagerHarness()
        let url = h.serveFiles(1)[0]
        try h.manager.download([url])
        struct Custom {}
        for value in [Custom(), UInt64.max, ["ok", Custom()], [1: "non-string key"]] as [Any] {
            do {
                try h.manager.updateMetaInfo(["good": 1, "bad": value], forTask: url)
                Issue.record("accepted \(value)")
            } catch {
                #expect(error.code == .notPropertyList)
            }
        }
        #expect(h.manager.metaInfo(ofTask: url) == [:])
        #expect(throws: DownloadManagerError.self) { try h.manager.updateMetaInfo(["a": 1], forTask: h.url("/nope")) }
        #expect(h.manager.metaInfo(ofTask: h.url("/nope")) == nil)
    }

    @Test func displayNameChangesAreShownSortedAndSaved() async throws {
        let h = try ManagerHarness()
        let urls = h.serveFiles(2)
        try h.manager.download(urls)
        h.runUntilIdle()
        #expect(h.manager.fileDisplayName(ofTask: urls[0]) == "f0")
        try h.manager.changeDisplayNameOfTask(urls[1], to: "a first.txt")
        #expect(h.manager.fileDisplayName(ofTask: urls[1]) == "a first")
        h.manager.hiddenFileExtension = false
        #expect(h.manager.fileDisplayName(at: ListIndexPath(section: 0, item: 1)) == "a first.txt")
        h.manager.sortListBy(type: .fileName)
        #expect(h.manager.downloadList == [[urls[1], urls[0]]])
        #expect(h.snapshot.tasks.first { $0.urlString == urls[1] }?.displayName == "a first.txt")
        #expect(throws: DownloadManagerError.self) { try h.manager.changeDisplayNameOfTask(urls[0], to: "") }
        #expect(throws: DownloadManagerError.self) { try h.manager.changeDisplayNameOfTask(h.url("/x"), to: "y") }
        await h.recorder.wait { $0.contains(.displayNameChanged(urls[1])) }
    }

    @Test func queriesByURLAndLocation() throws {
        let h = try ManagerHarness { $0.downloadNewFileImmediately = false }
        let url = h.serveFiles(1, size: 2_000_000)[0]
        try h.manager.download([url])
        let location = ListIndexPath(section: 0, item: 0)
        #expect(h.manager.downloadState(at: location) == .pending)
        #expect(h.manager.downloadProgress(ofTask: url) == 0)
        #expect(h.manager.downloadProgress(ofTask: h.url("/x")) == -1)
        #expect(h.manager.fileByteCount(at: ListIndexPath(section: 3, item: 0)) == -1)
        #expect(h.manager.filePath(at: location) == nil)
        try h.manager.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.manager.downloadProgress(at: location) == 1)
        #expect(h.manager.fileByteCount(at: location) == 2_000_000)
        #expect(h.manager.downloadDetail(at: location) == "2 MB")
        #expect(h.manager.fileURL(at: location)?.path == h.manager.filePath(ofTask: url))
        #expect(h.manager.downloadState(at: ListIndexPath(section: 0, item: 1)) == .notInList)
        #expect(h.manager.verificationResult(ofTask: url) == .unverified)
        let info = try #require(h.manager.info(ofTask: url))
        #expect(info["URLString"] as? String == url)
        #expect(info["fileByteCount"] as? Int64 == 2_000_000)
        #expect(info["state"] as? DownloadState == .finished)
        #expect(h.manager.info(ofTask: h.url("/x")) == nil)
        #expect(h.manager.debugDescription(ofTask: url).contains("finished"))
    }
}
