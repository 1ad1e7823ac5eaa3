import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import Testing

/// Adding tasks: keys, duplicates, invalid URLs, and a whole download on the mock transport.
@Suite("DownloadEngine adding")
struct EngineAddingTests {
    @Test func addingReportsAddedDuplicatesAndInvalidURLs() throws {
        let h = try EngineHarness { $0.downloadNewFileImmediately = false }
        let result = h.engine.download([
            h.url("/a.bin"), "HTTP://MOCK.TEST:80/a.bin", "ftp://mock.test/x", "", h.url("/b.bin"), h.url("/b.bin"),
        ])
        #expect(result.added == [h.url("/a.bin"), h.url("/b.bin")])
        #expect(
            result.duplicates.map { [$0.urlString, $0.existingURLString] } == [
                ["HTTP://MOCK.TEST:80/a.bin", h.url("/a.bin")], [h.url("/b.bin"), h.url("/b.bin")],
            ])
        #expect(result.invalid.map(\.urlString) == ["ftp://mock.test/x", ""])
        #expect(result.invalid.map(\.error.code) == [.unsupportedScheme, .empty])
        #expect(h.engine.urlStrings() == [h.url("/a.bin"), h.url("/b.bin")])
        #expect(h.engine.state(ofTask: "HTTP://MOCK.TEST:80/a.bin") == .notInList, "the user's string is the key")

        let again = h.engine.download([h.url("/a.bin")])
        #expect(again.added.isEmpty)
        #expect(again.duplicates.count == 1)
        #expect(h.engine.urlStrings().count == 2, "a rejected URL changes nothing")
    }

    @Test func withoutDownloadNewFileImmediatelyTasksStayPending() throws {
        let h = try EngineHarness { $0.downloadNewFileImmediately = false }
        h.serve("/a.bin", count: 1000)
        h.engine.download([h.url("/a.bin")])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: h.url("/a.bin")) == .pending)
        #expect(h.server.requests.isEmpty)
        #expect(h.engine.resumeTasks([h.url("/a.bin")]).changed == [h.url("/a.bin")])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: h.url("/a.bin")) == .finished)
    }

    @Test func anItemMayOverrideWhetherItStartsImmediately() throws {
        let h = try EngineHarness()
        h.serve("/held.bin", count: 1000)
        h.serve("/now.bin", count: 1000)
        h.engine.download([DownloadItem(h.url("/held.bin"), startsImmediately: false)])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: h.url("/held.bin")) == .pending)
        #expect(h.server.requests.isEmpty, "a task added not to start never opens a connection")
        h.engine.downloadNewFileImmediately = false
        h.engine.download([DownloadItem(h.url("/now.bin"), startsImmediately: true)])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: h.url("/now.bin")) == .finished)
        #expect(h.engine.state(ofTask: h.url("/held.bin")) == .pending)
    }

    @Test func aDownloadLandsWholeUnderItsNameAndLeavesNoTemporaryFile() async throws {
        let h = try EngineHarness()
        let body = h.serve("/files/a.bin", count: 200_000)
        let url = h.url("/files/a.bin")
        h.engine.download([url])
        #expect(h.engine.state(ofTask: url) == .downloading)
        h.runUntilIdle()

        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.files == ["a.bin"])
        #expect(h.bytes(of: "a.bin") == body.allBytes)
        #expect(h.engine.filePath(ofTask: url) == h.downloads + "/a.bin")
        #expect(h.engine.fileURL(ofTask: url)?.path == h.downloads + "/a.bin")
        #expect(h.engine.isFileExisted(ofTask: url))
        #expect(h.engine.downloadProgress(ofTask: url) == 1)
        #expect(h.engine.fileByteCount(ofTask: url) == 200_000)
        #expect(h.engine.downloadDetail(ofTask: url) == "200 KB")
        #expect(h.engine.fileDisplayName(ofTask: url) == "a")
        h.engine.hiddenFileExtension = false
        #expect(h.engine.fileDisplayName(ofTask: url) == "a.bin")
        #expect(h.engine.fileKind(ofTask: url) == .other)
        #expect(h.engine.task(url)?.record.finishedAt == EngineHarness.date)
        #expect(h.completed.map(\.0) == [url])
        #expect((try? h.completed.first?.1.get())?.path == h.downloads + "/a.bin")

        let events = await h.recorder.wait(for: url, count: 4)
        #expect(events.first == .added(url))
        #expect(events.dropFirst().first == .started(url, offset: 0))
        #expect(events.last == .finished(url, file: URL(filePath: h.downloads + "/a.bin")))
    }

    @Test func anEmptyFileFinishesWithAnEmptyFile() throws {
        let h = try EngineHarness()
        h.server.setRoute(.file(.empty), for: "/empty.txt")
        h.engine.download([h.url("/empty.txt")])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: h.url("/empty.txt")) == .finished)
        #expect(h.files == ["empty.txt"])
        #expect(h.bytes(of: "empty.txt") == [])
    }

    @Test func unqueriedTasksAnswerLikeSDE() throws {
        let h = try EngineHarness()
        let unknown = h.url("/nope")
        #expect(h.engine.state(ofTask: unknown) == .notInList)
        #expect(h.engine.downloadProgress(ofTask: unknown) == -1)
        #expect(h.engine.fileByteCount(ofTask: unknown) == -1)
        #expect(h.engine.downloadDetail(ofTask: unknown) == nil)
        #expect(h.engine.fileDisplayName(ofTask: unknown) == nil)
        #expect(h.engine.filePath(ofTask: unknown) == nil)
        #expect(h.engine.fileKind(ofTask: unknown) == nil)
    }

    @Test func aHeadRequestFetchesAnUnknownSize() async throws {
        let h = try EngineHarness { $0.downloadNewFileImmediately = false }
        h.server.setRoute(
            .file(.generated(seed: 1, count: 12_345)).adding(
                header: "Content-Disposition", value: "attachment; filename=\"real.iso\""), for: "/get")
        let url = h.url("/get?id=1")
        h.engine.download([url])
        #expect(h.engine.fileByteCount(ofTask: url) == -1)
        #expect(h.engine.fileDisplayName(ofTask: url) == "get")
        async let size = h.engine.fetchFileByteCount(ofTask: url)
        // The HEAD request runs on the manual clock.
        while h.transport.activeTransfers.isEmpty { await Task.yield() }
        h.transport.runUntilIdle()
        #expect(await size == 12_345)
        #expect(h.server.requests.map(\.method) == ["HEAD"])
        #expect(h.engine.fileByteCount(ofTask: url) == 12_345)
        #expect(h.engine.fileDisplayName(ofTask: url) == "real")
        #expect(h.engine.downloadDetail(ofTask: url) == "0 bytes/12 KB")
        #expect(await h.engine.fetchFileByteCount(ofTask: url) == 12_345, "known: no second request")
        #expect(h.server.requests.count == 1)
    }
}
