import Foundation
import Peregrine
import PeregrineJSONStorage
import PeregrineMockTransport
import PeregrineVerification
import TestSupport
import Testing

@Suite struct DownloadManagerPersistenceTests {
    @Test func everythingComesBackFromTheStore() throws {
        let first = try ManagerHarness(manualMode: true) {
            $0.isTrashOpened = true
            $0.maxDownloadCount = 2
        }
        defer { first.scratch.remove() }
        let urls = first.serveFiles(4)
        try first.manager.download(Array(urls[0..<2]), inManualModeAtSection: 0, withTitle: "Songs")
        try first.manager.download(Array(urls[2..<4]), inManualModeAtSection: 1, withTitle: "Films")
        first.runUntilIdle()
        try first.manager.updateMetaInfo(["year": 1999, "singer": "Al"], forTask: urls[0])
        try first.manager.changeDisplayNameOfTask(urls[1], to: "Shown.bin")
        try first.manager.deleteTasks([urls[3]], keepFinishedFile: true)
        try first.manager.moveTask(at: ListIndexPath(section: 0, item: 0), to: ListIndexPath(section: 1, item: 0))
        first.manager.setMaxDownloadCount(1, in: "films")
        try first.manager.saveData()
        #expect(first.store.saveCount == 1)

        let second = try ManagerHarness(snapshot: first.snapshot, scratch: first.scratch, server: first.server)
        #expect(second.manager.loadRepairs.isEmpty)
        #expect(second.manager.restoredAfterForcedQuit.isEmpty)
        #expect(second.manager.sortType == .manual)
        #expect(second.manager.downloadList == first.manager.downloadList)
        #expect(second.manager.sectionTitles == ["Songs", "Films"])
        #expect(second.manager.toDeleteList == [urls[3]])
        #expect(second.manager.isTrashOpened)
        #expect(second.manager.maxDownloadCount == 2)
        #expect(second.manager.engine.maxDownloadCount(in: "films") == 1)
        #expect(second.manager.isDataLoaded)
        #expect(second.manager.info(ofTask: urls[0], about: "year") as? Int == 1999)
        #expect(second.manager.fileDisplayName(ofTask: urls[1]) == "Shown")
        for url in urls {
            #expect(second.state(url) == .finished)
            #expect(second.manager.isFileExisted(ofTask: url))
        }
        // The trashed task still keeps its finished file when cleaned up after the restart.
        let kept = try #require(second.manager.filePath(ofTask: urls[3]))
        #expect(try second.manager.cleanupToDeleteTasks([urls[3]]).count == 1)
        #expect(FileManager.default.fileExists(atPath: kept))
    }

    @Test func speedLimitsSetThroughTheAPIComeBackAndWinOverTheConfiguration() throws {
        let configured = try SpeedLimit(bytesPerSecond: 4_000_000)
        let first = try ManagerHarness { $0.overallSpeedLimit = configured }
        defer { first.scratch.remove() }
        try first.manager.saveData()
        // The configuration's limit alone is not saved: a run configured without one has none.
        let unconfigured = try ManagerHarness(snapshot: first.snapshot, scratch: first.scratch, server: first.server)
        #expect(unconfigured.manager.overallSpeedLimit == nil)

        let overall = try SpeedLimit(bytesPerSecond: 1_000_000)
        let films = try SpeedLimit(bytesPerSecond: 250_000)
        let songs = try SpeedLimit(bytesPerSecond: 125_000)
        first.manager.overallSpeedLimit = overall
        first.manager.setSpeedLimit(films, forList: "films")
        first.manager.setSpeedLimit(songs, forList: "songs")
        first.manager.setSpeedLimit(nil, forList: "songs")
        try first.manager.saveData()

        let second = try ManagerHarness(snapshot: first.snapshot, scratch: first.scratch, server: first.server) {
            $0.overallSpeedLimit = configured
        }
        #expect(second.manager.loadRepairs.isEmpty)
        #expect(second.manager.overallSpeedLimit == overall)
        #expect(second.manager.speedLimit(ofList: "films") == films)
        #expect(second.manager.speedLimit(ofList: "songs") == nil)
        #expect(second.manager.speedLimit(ofList: .default) == nil)

        // Set to none through the API, none wins over the configuration's limit next time.
        second.manager.overallSpeedLimit = nil
        try second.manager.saveData()
        let third = try ManagerHarness(snapshot: second.snapshot, scratch: first.scratch, server: first.server) {
            $0.overallSpeedLimit = configured
        }
        #expect(third.manager.overallSpeedLimit == nil)
        #expect(third.manager.speedLimit(ofList: "films") == films)
    }

    @Test func savedSpeedLimitsAStoreCannotHoldAreIgnored() throws {
        var snapshot = StoreSnapshot()
        snapshot.configuration["overallSpeedLimit"] = .integer(-5)
        snapshot.configuration["listSpeedLimits"] = .dictionary([
            "films": .string("fast"), "songs": .integer(SpeedLimit.maximum + 1), "books": .integer(64_000),
        ])
        let harness = try ManagerHarness(snapshot: snapshot)
        defer { harness.scratch.remove() }
        #expect(harness.manager.overallSpeedLimit == nil)
        #expect(harness.manager.speedLimit(ofList: "films") == nil)
        #expect(harness.manager.speedLimit(ofList: "songs") == nil)
        #expect(harness.manager.speedLimit(ofList: "books") == (try SpeedLimit(bytesPerSecond: 64_000)))
    }

    @Test func checksumSourcesAndRetryRulesComeBackFromTheStore() throws {
        let first = try ManagerHarness { $0.downloadNewFileImmediately = false }
        defer { first.scratch.remove() }
        let urls = first.serveFiles(2)
        let rule = VerificationRetryPolicy(maxAttempts: 5, mismatchedFile: .delete)
        let digest = "sha256=" + String(repeating: "a", count: 64)
        let added = try first.manager.download([
            DownloadItem(urls[0], checksumURL: first.url("/SHA256SUMS"), verificationRetry: rule),
            DownloadItem(urls[1], checksum: digest),
        ])
        #expect(added.addition.added == urls)
        try first.manager.saveData()

        let second = try ManagerHarness(snapshot: first.snapshot, scratch: first.scratch, server: first.server)
        let withURL = try #require(second.manager.engine.task(urls[0])?.record)
        #expect(withURL.checksumURL == first.url("/SHA256SUMS"))
        #expect(withURL.verificationRetry == rule)
        let withDigest = try #require(second.manager.engine.task(urls[1])?.record)
        #expect(withDigest.checksum == digest)
        #expect(withDigest.checksumURL == nil)
        #expect(withDigest.verificationRetry == nil)
    }

    @Test func interruptedDownloadResumesFromItsRecord() async throws {
        let server = MockServer()
        let body = MockBody.generated(seed: 3, count: 1_000_000)
        server.setRoute(.file(body, entityTag: .fixed("\"v1\"")).throttled(toBytesPerSecond: 100_000), for: "/slow.bin")
        let first = try ManagerHarness(server: server)
        defer { first.scratch.remove() }
        let url = first.url("/slow.bin")
        try first.manager.download([url])
        first.transport.advance(by: .seconds(4))
        let stored = try #require(first.snapshot.tasks.first { $0.urlString == url })
        #expect(stored.state == .downloading)
        let offset = try #require(stored.resumeRecord?.offset)
        #expect(offset > 0)
        // The process "dies": a new manager loads what the store holds. (The first one's
        // transfer ends, so that its lock on the partial file goes as a dead process's would.)
        let snapshot = first.snapshot
        first.manager.shutDown()
        first.transport.runUntilIdle()
        server.clearRequests()
        let second = try ManagerHarness(snapshot: snapshot, scratch: first.scratch, server: server)
        #expect(second.manager.restoredAfterForcedQuit == [url])
        #expect(second.state(url) == .stopped)
        #expect(second.manager.downloadList == [[url]])
        #expect(try second.manager.resumeTasks([url]) == [url])
        second.runUntilIdle()
        #expect(second.state(url) == .finished)
        let path = try #require(second.manager.filePath(ofTask: url))
        #expect(FileManager.default.contents(atPath: path).map { [UInt8]($0) } == body.bytes(in: 0..<1_000_000))
        let ranges = server.requests(for: "/slow.bin").compactMap { $0.headers["Range"] }
        #expect(ranges.first.map { $0.hasPrefix("bytes=") && !$0.hasPrefix("bytes=0-") } == true)
    }

    @Test func tasksMissingFromTheirListAreRepairedNotDropped() throws {
        let first = try ManagerHarness()
        defer { first.scratch.remove() }
        let urls = first.serveFiles(2)
        try first.manager.download(urls)
        var snapshot = first.snapshot
        snapshot.lists[""]?.sections = [[urls[0], first.url("/ghost.bin")]]
        let second = try ManagerHarness(snapshot: snapshot, scratch: first.scratch, server: first.server)
        #expect(Set(second.manager.downloadList.flatMap { $0 }) == Set(urls))
        #expect(second.manager.loadRepairs.count == 2)
    }

    @Test func jsonStoreRoundTrip() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-json")
        defer { scratch.remove() }
        let server = MockServer()
        let urls = (0..<3).map { index -> String in
            server.setRoute(.file(.generated(seed: UInt64(index), count: 5000)), for: "/j\(index).txt")
            return "http://mock.test/j\(index).txt"
        }
        func configuration(_ transport: MockTransport) -> DownloadManager.Configuration {
            var configuration = DownloadManager.Configuration(
                downloadDirectory: scratch.path("downloads"), stateDirectory: scratch.path("state"),
                transport: transport)
            configuration.isTrashOpened = true
            return configuration
        }
        do {
            let transport = MockTransport(server: server, mode: .manual)
            let manager = try DownloadManager(identifier: "json", configuration: configuration(transport))
            try manager.download(urls)
            transport.runUntilIdle()
            try manager.updateMetaInfo(["when": Date(timeIntervalSince1970: 5), "blob": Data([9])], forTask: urls[0])
            try manager.deleteTasks([urls[2]])
            manager.sectioningFileSizeList = true
            manager.sortListBy(type: .fileSize, order: .descending)
            try manager.saveData()
        }
        let transport = MockTransport(server: server, mode: .manual)
        let manager = try DownloadManager(identifier: "json", configuration: configuration(transport))
        #expect(manager.loadRepairs.isEmpty)
        #expect(manager.sortType == .fileSize)
        #expect(manager.sortOrder == .descending)
        #expect(manager.sectioningFileSizeList)
        #expect(manager.sectionTitles == ["0 ~ 1 MB"])
        #expect(manager.toDeleteList == [urls[2]])
        #expect(Set(manager.downloadList.flatMap { $0 }) == Set(urls[0..<2]))
        #expect(manager.info(ofTask: urls[0], about: "when") as? Date == Date(timeIntervalSince1970: 5))
        #expect(manager.info(ofTask: urls[0], about: "blob") as? Data == Data([9]))
        for url in urls { #expect(manager.downloadState(ofTask: url) == .finished) }
    }

    @Test func managersAreSharedByIdentifierAndDestroyedWithoutTheirFiles() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-registry")
        defer { scratch.remove() }
        let server = MockServer()
        server.setRoute(.file(.generated(seed: 1, count: 100)), for: "/r.bin")
        let configuration = DownloadManager.Configuration(
            downloadDirectory: scratch.path("downloads"), stateDirectory: scratch.path("state"),
            transport: MockTransport(server: server, mode: .automatic))
        let identifier = "registry-\(UInt64.random(in: 0 ... .max))"
        let shared = try DownloadManager.manager(identifier: identifier, configuration: configuration)
        #expect(try DownloadManager.manager(identifier: identifier, configuration: configuration) === shared)
        #expect(!DownloadManager.isDestroyableForManager(identifier, configuration: configuration))
        #expect(!DownloadManager.destroyManager(identifier, configuration: configuration))

        let other = "other-\(UInt64.random(in: 0 ... .max))"
        #expect(!DownloadManager.isDestroyableForManager(other, configuration: configuration))
        var path: String?
        do {
            let manager = try DownloadManager(identifier: other, configuration: configuration)
            let (finished, done) = AsyncStream<URL>.makeStream()
            _ = try manager.download("http://mock.test/r.bin").success { done.yield($0) }
            _ = finished
            try manager.saveData()
            path = manager.downloadDirectory
        }
        #expect(DownloadManager.isDestroyableForManager(other, configuration: configuration))
        #expect(DownloadManager.destroyManager(other, configuration: configuration))
        #expect(!DownloadManager.isDestroyableForManager(other, configuration: configuration))
        let fresh = try DownloadManager(identifier: other, configuration: configuration)
        #expect(fresh.downloadList.isEmpty)
        #expect(FileManager.default.fileExists(atPath: try #require(path)))
    }

    @Test func outerPartialDownloadIsTakenOver() throws {
        let h = try ManagerHarness()
        defer { h.scratch.remove() }
        let body = h.serve("/outer.bin", count: 50_000)
        let partial = h.scratch.path("outer.part")
        _ = FileManager.default.createFile(atPath: partial, contents: Data(body.bytes(in: 0..<20_000)))
        let url = h.url("/outer.bin")
        let location = try h.manager.resumeOuterDownload(
            urlString: url, partialFile: partial, validator: .entityTag("\"v1\""), expectedLength: 50_000)
        #expect(location == ListIndexPath(section: 0, item: 0))
        #expect(h.state(url) == .stopped)
        #expect(h.manager.downloadProgress(ofTask: url) == 0.4)
        #expect(throws: DownloadManagerError.self) {
            try h.manager.resumeOuterDownload(urlString: url, partialFile: partial, validator: nil)
        }
        #expect(throws: DownloadManagerError.self) {
            try h.manager.resumeOuterDownload(
                urlString: h.url("/x"), partialFile: h.scratch.path("none"), validator: nil)
        }
        try h.manager.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.state(url) == .finished)
        let path = try #require(h.manager.filePath(ofTask: url))
        #expect(FileManager.default.contents(atPath: path).map { [UInt8]($0) } == body.bytes(in: 0..<50_000))
        #expect(h.server.requests(for: "/outer.bin").last?.headers["Range"] == "bytes=20000-")
    }

    /// The tasks of another store of the same directory (a run beside this one) are taken over:
    /// a finished one with its file and meta info, a stopped one resuming with Range; tasks
    /// already here are left out.
    @Test func theTasksOfAnotherStoreOfTheDirectoryAreTakenOver() throws {
        let first = try ManagerHarness()
        defer { first.scratch.remove() }
        first.serve("/done.bin", count: 5_000)
        let body = MockBody.generated(seed: 3, count: 400_000)
        first.server.setRoute(
            MockRoute.file(body, entityTag: .fixed("\"p\"")).throttled(toBytesPerSecond: 100_000), for: "/part.bin")
        let done = first.url("/done.bin")
        let part = first.url("/part.bin")
        try first.manager.download([done, part])
        try first.manager.updateMetaInfo(["n": .integer(7)], forTask: done)
        first.transport.advance(by: .seconds(1))
        #expect(first.state(done) == .finished)
        try first.manager.stopTasks([part])
        first.runUntilIdle()
        let snapshot = first.snapshot
        first.manager.shutDown()

        let second = try ManagerHarness(scratch: first.scratch, server: first.server)
        try second.manager.download([second.url("/done.bin")], in: "other")
        #expect(second.manager.adoptTasks(of: snapshot) == [part])
        let third = try ManagerHarness(scratch: first.scratch, server: first.server)
        #expect(Set(third.manager.adoptTasks(of: snapshot)) == [done, part])
        #expect(third.state(done) == .finished)
        #expect(third.manager.info(ofTask: done, about: "n") as? Int == 7)
        #expect(third.manager.downloadList.flatMap { $0 }.sorted() == [done, part])
        #expect(third.state(part) == .stopped)
        try third.manager.resumeTasks([part])
        third.runUntilIdle()
        #expect(third.state(part) == .finished)
        let path = try #require(third.manager.filePath(ofTask: part))
        #expect(FileManager.default.contents(atPath: path).map { [UInt8]($0) } == body.bytes(in: 0..<400_000))
        #expect(first.server.requests(for: "/part.bin").last?.headers["Range"]?.hasPrefix("bytes=") == true)
        // What the third took is in its own store.
        #expect(Set(third.snapshot.tasks.map(\.urlString)) == [done, part])
        #expect(third.manager.adoptTasks(of: snapshot).isEmpty)
    }

    @Test func outerDownloadInManualModeNeedsALocation() throws {
        let h = try ManagerHarness(manualMode: true)
        defer { h.scratch.remove() }
        let body = h.serve("/m.bin", count: 10_000)
        let partial = h.scratch.path("m.part")
        _ = FileManager.default.createFile(atPath: partial, contents: Data(body.bytes(in: 0..<4000)))
        let url = h.url("/m.bin")
        #expect(throws: DownloadManagerError.self) {
            try h.manager.resumeOuterDownload(urlString: url, partialFile: partial, validator: nil)
        }
        #expect(throws: DownloadManagerError.self) {
            try h.manager.resumeOuterDownload(
                urlString: url, partialFile: partial, validator: nil, insertAt: ListIndexPath(section: 0, item: 0))
        }
        #expect(h.manager.task(url) == nil)
        try h.manager.insertPlaceholderSectionInManualMode(atSection: 0, withTitle: "Imported")
        let location = try h.manager.resumeOuterDownload(
            urlString: url, partialFile: partial, validator: .entityTag("\"v1\""),
            insertAt: ListIndexPath(section: 0, item: 0))
        #expect(location == ListIndexPath(section: 0, item: 0))
        #expect(h.manager.fileByteCount(ofTask: url) == -1 || h.manager.fileByteCount(ofTask: url) == 10_000)
        try h.manager.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.state(url) == .finished)
    }
}
