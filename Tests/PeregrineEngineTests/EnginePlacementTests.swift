import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import Testing

/// A file is placed by linking it under its final name, and its temporary name goes only once
/// the record saying where it went is durable; a restart in between adopts the placed file.
@Suite("DownloadEngine placement")
struct EnginePlacementTests {
    /// A stored record of a task killed after its file was placed as `placed` (a hard link of
    /// the temporary file) but before the store had the finished record.
    func killedAfterPlacing(
        _ h: EngineHarness, path: String, placed: String, fileName: String?, state: DownloadState = .downloading
    ) throws -> (url: String, record: DownloadTaskRecord, bytes: Data) {
        let url = h.url(path)
        let temporary = ".peregrine-00000000000000cc.part"
        let bytes = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try bytes.write(to: URL(fileURLWithPath: h.downloads + "/" + temporary))
        #expect(link(h.downloads + "/" + temporary, h.downloads + "/" + placed) == 0)
        let record = DownloadTaskRecord(
            urlString: url, state: state,
            resumeRecord: ResumeRecord(offset: 1000, validator: .entityTag("\"v1\""), expectedLength: 3000),
            fileName: fileName, temporaryFileName: temporary, addedAt: EngineHarness.date)
        return (url, record, bytes)
    }

    @Test(arguments: [
        ("a.bin", "a.bin" as String?),  // the recorded name
        ("a (2).bin", "a.bin"),  // a numbered name, from the conflict policy
        ("from-the-server.bin", nil),  // a name the store never saw (Content-Disposition)
    ])
    func aFilePlacedButNotRecordedIsAdoptedOnRestore(placed: String, fileName: String?) throws {
        let h = try EngineHarness()
        h.serve("/a.bin", count: 3000)
        let (url, record, bytes) = try killedAfterPlacing(h, path: "/a.bin", placed: placed, fileName: fileName)
        let result = h.engine.restore([record])
        #expect(result.recovered == [url])
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.task(url)?.record.fileName == placed)
        #expect(h.files == [placed])
        #expect(h.bytes(of: placed) == Array(bytes))
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.server.requests.isEmpty, "an adopted file is never downloaded again")
    }

    @Test func aFinishedRecordDropsItsLeftoverLink() throws {
        let h = try EngineHarness()
        var (url, record, _) = try killedAfterPlacing(h, path: "/b.bin", placed: "b.bin", fileName: "b.bin")
        record.state = .finished
        record.resumeRecord = nil
        h.engine.restore([record])
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.files == ["b.bin"])
    }

    @Test func aFinishedDownloadLeavesOnlyItsFile() throws {
        let h = try EngineHarness()
        let body = h.serve("/c.bin", count: 5000)
        let url = h.url("/c.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.files == ["c.bin"])
        #expect(h.bytes(of: "c.bin") == body.allBytes)
    }
}

/// Names are limited in bytes, with room for the suffixes the engine adds.
@Suite("DownloadEngine long names")
struct EngineLongNameTests {
    static let longName = String(repeating: "é", count: 200) + ".tar.gz"  // 407 bytes of UTF-8

    @Test func aLongUTF8NameIsCutOnACharacterBoundaryKeepingItsExtension() throws {
        let h = try EngineHarness()
        let body = MockBody.generated(seed: 1, count: 1000)
        let encoded = Self.longName.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        h.server.setRoute(
            MockRoute.file(body).adding(
                header: "Content-Disposition", value: "attachment; filename*=UTF-8''\(encoded)"),
            for: "/long")
        h.engine.download([h.url("/long")])
        h.engine.download([h.url("/long?again")])
        h.runUntilIdle()
        #expect(h.visibleFiles.count == 2)
        for name in h.visibleFiles {
            #expect(name.utf8.count <= 255, "\(name.utf8.count) bytes")
            #expect(name.hasSuffix(".tar.gz"))
            #expect(h.bytes(of: name) == body.allBytes)
        }
    }

    @Test func aMismatchedFileWithALongNameIsStillKeptAside() throws {
        let h = try EngineHarness()
        let body = MockBody.generated(seed: 2, count: 1000)
        let encoded = Self.longName.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        h.server.setRoute(
            MockRoute.file(body).adding(
                header: "Content-Disposition", value: "attachment; filename*=UTF-8''\(encoded)"),
            for: "/long")
        let url = h.url("/long")
        h.engine.download([DownloadItem(url, checksum: "sha256=" + String(repeating: "0", count: 64))])
        h.runUntilIdle()
        let kept = try #require(h.visibleFiles.first, "the mismatched file was lost")
        #expect(h.visibleFiles.count == 1)
        #expect(kept.hasSuffix(".mismatch"))
        #expect(kept.utf8.count <= 255)
        #expect(h.bytes(of: kept) == body.allBytes)
    }
}

/// The free space of the download directory's file system is checked against the announced size
/// before the first byte is written.
@Suite("DownloadEngine free space")
struct EngineFreeSpaceTests {
    @Test func aFileLargerThanTheFreeSpaceFailsBeforeItsFirstByte() throws {
        let h = try EngineHarness()
        // A petabyte, announced by the head; no byte of it is ever generated or written.
        h.server.setRoute(.file(.generated(seed: 1, count: 1 << 50)), for: "/huge.iso")
        let url = h.url("/huge.iso")
        h.engine.download([url])
        h.runUntilIdle()
        guard case .failed(let reason) = h.engine.state(ofTask: url) else {
            Issue.record("expected a failure, got \(h.engine.state(ofTask: url))")
            return
        }
        #expect(reason.code == .diskFull)
        #expect(reason.message.contains("not enough free space"))
        #expect(h.files.isEmpty, "nothing was written: \(h.files)")
    }
}
