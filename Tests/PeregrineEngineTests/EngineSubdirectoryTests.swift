import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `DownloadItem.subdirectory`: a file placed in a folder inside the download directory, made
/// when needed, numbered there on a conflict, never through a symbolic link, and found there
/// again after a crash between placing and recording.
@Suite("DownloadEngine subdirectories")
struct EngineSubdirectoryTests {
    @Test func filesArePlacedInTheirFoldersAndNumberedThere() throws {
        let h = try EngineHarness()
        let first = h.serve("/x/song.flac", count: 4000, seed: 1)
        let second = h.serve("/y/song.flac", count: 5000, seed: 2)
        let third = h.serve("/z/song.flac", count: 6000, seed: 3)
        let addition = h.engine.download([
            DownloadItem(h.url("/x/song.flac"), subdirectory: "music/2026"),
            DownloadItem(h.url("/y/song.flac"), subdirectory: "music//2026/"),
            DownloadItem(h.url("/z/song.flac")),
        ])
        #expect(addition.added.count == 3)
        h.runUntilIdle()
        #expect(h.engine.task(h.url("/x/song.flac"))?.record.fileName == "music/2026/song.flac")
        #expect(h.engine.task(h.url("/y/song.flac"))?.record.fileName == "music/2026/song (1).flac")
        #expect(h.engine.task(h.url("/z/song.flac"))?.record.fileName == "song.flac")
        #expect(h.bytes(of: "music/2026/song.flac") == first.allBytes)
        #expect(h.bytes(of: "music/2026/song (1).flac") == second.allBytes)
        #expect(h.bytes(of: "song.flac") == third.allBytes)
        #expect(h.engine.filePath(ofTask: h.url("/y/song.flac")) == h.downloads + "/music/2026/song (1).flac")
        #expect(h.engine.fileDisplayName(ofTask: h.url("/x/song.flac"))?.contains("/") == false)
        #expect(h.visibleFiles == ["music", "song.flac"])
    }

    @Test(arguments: ["../outside", "/etc", "a/../b", "a/./b", ".", "a\u{0}b"])
    func aFolderThatIsNoPlainRelativePathIsRefused(subdirectory: String) throws {
        let h = try EngineHarness()
        h.serve("/a.bin", count: 100)
        let addition = h.engine.download([DownloadItem(h.url("/a.bin"), subdirectory: subdirectory)])
        #expect(addition.added.isEmpty)
        #expect(addition.invalidSubdirectories.map(\.urlString) == [h.url("/a.bin")])
        #expect(addition.invalidSubdirectories.map(\.subdirectory) == [subdirectory])
        #expect(h.engine.task(h.url("/a.bin")) == nil)
    }

    @Test func aSymbolicLinkOnTheWayFailsTheTaskAndWritesNothingOutside() throws {
        let h = try EngineHarness()
        let outside = h.scratch.path("outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        #expect(symlink(outside, h.downloads + "/escape") == 0)
        h.serve("/a.bin", count: 100)
        h.engine.download([DownloadItem(h.url("/a.bin"), subdirectory: "escape/deeper")])
        h.runUntilIdle()
        guard case .failed(let reason) = h.engine.state(ofTask: h.url("/a.bin")) else {
            Issue.record("placed through a symbolic link: \(h.engine.state(ofTask: h.url("/a.bin")))")
            return
        }
        #expect(reason.code == .fileSystem, "\(reason)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: outside)) == [])
    }

    @Test func aFolderChangedBeforeTheEndIsWhereTheFileGoes() throws {
        let h = try EngineHarness(chunkSize: 1000)
        let body = MockBody.generated(seed: 9, count: 5000)
        h.server.setRoute(.file(body, entityTag: .fixed("\"v1\"")).throttled(toBytesPerSecond: 5000), for: "/a.bin")
        let url = h.url("/a.bin")
        h.engine.download([DownloadItem(url, subdirectory: "first")])
        h.advance(.milliseconds(400))
        #expect(h.engine.state(ofTask: url) == .downloading)
        #expect(h.engine.setSubdirectory("second/place", forTask: url))
        h.runUntilIdle()
        #expect(h.engine.task(url)?.record.fileName == "second/place/a.bin")
        #expect(h.bytes(of: "second/place/a.bin") == body.allBytes)
        #expect(!h.engine.setSubdirectory("third", forTask: url), "a finished file stays where it is")
        #expect(!h.engine.setSubdirectory("../x", forTask: url))
    }

    @Test(arguments: [("dir/a.bin", "a.bin" as String?), ("dir/a (2).bin", "a.bin"), ("dir/from-server.bin", nil)])
    func aFilePlacedInItsFolderButNotRecordedIsAdoptedOnRestore(placed: String, base: String?) throws {
        let h = try EngineHarness()
        h.serve("/a.bin", count: 3000)
        let url = h.url("/a.bin")
        let temporary = ".peregrine-00000000000000dd.part"
        let bytes = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 * 5) })
        try FileManager.default.createDirectory(atPath: h.downloads + "/dir", withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: h.downloads + "/" + temporary))
        #expect(link(h.downloads + "/" + temporary, h.downloads + "/" + placed) == 0)
        let record = DownloadTaskRecord(
            urlString: url, state: .downloading,
            resumeRecord: ResumeRecord(offset: 1000, validator: .entityTag("\"v1\""), expectedLength: 3000),
            fileName: base.map { "dir/" + $0 }, temporaryFileName: temporary, addedAt: EngineHarness.date,
            subdirectory: "dir")
        let result = h.engine.restore([record])
        #expect(result.recovered == [url])
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.task(url)?.record.fileName == placed)
        #expect(!FileManager.default.fileExists(atPath: h.downloads + "/" + temporary))
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.server.requests.isEmpty, "an adopted file is never downloaded again")
    }

    @Test func aStoredFolderThatLeavesTheDirectoryIsRejected() throws {
        let h = try EngineHarness()
        let record = DownloadTaskRecord(
            urlString: h.url("/a.bin"), state: .pending, temporaryFileName: ".peregrine-00000000000000ee.part",
            addedAt: EngineHarness.date, subdirectory: "../../etc")
        let result = h.engine.restore([record])
        #expect(result.restored.isEmpty)
        #expect(result.rejected.map(\.urlString) == [h.url("/a.bin")])
    }
}
