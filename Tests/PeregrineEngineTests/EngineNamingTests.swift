import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import Synchronization
import Testing

/// File names from the server and the URL, hostile names, and the conflict policies, end to
/// end on the mock transport.
@Suite("DownloadEngine naming")
struct EngineNamingTests {
    func serve(_ h: EngineHarness, _ path: String, disposition: String?, count: Int64 = 1000) -> MockBody {
        let body = MockBody.generated(seed: 9, count: count)
        var route = MockRoute.file(body)
        if let disposition { route = route.adding(header: "Content-Disposition", value: disposition) }
        h.server.setRoute(route, for: path)
        return body
    }

    @Test func theServersNameWinsAndFilenameStarIsPreferred() throws {
        let h = try EngineHarness()
        let body = serve(
            h, "/download", disposition: "attachment; filename=\"rates.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt")
        let url = h.url("/download?id=42")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.files == ["€ rates.txt"])
        #expect(h.bytes(of: "€ rates.txt") == body.allBytes)
        #expect(h.engine.fileDisplayName(ofTask: url) == "€ rates")
        #expect(h.engine.task(url)?.record.fileName == "€ rates.txt")
    }

    @Test(arguments: [
        ("attachment; filename=\"../../etc/passwd\"", "passwd"),
        ("attachment; filename=\"/abs\"", "abs"),
        ("attachment; filename=\"evil\u{0}.txt\"", "evil.txt"),
        ("attachment; filename*=UTF-8''..%2F..%2F.ssh%2Fauthorized_keys", "authorized_keys"),
        ("attachment; filename=\"..\"", "hostile"),
        ("attachment; filename=\".hidden\"", "hidden"),
        (
            "attachment; filename=\"" + String(repeating: "n", count: 300) + ".txt\"",
            String(repeating: "n", count: 251) + ".txt"
        ),
    ])
    func hostileDispositionsLandInsideTheDirectoryUnderASafeName(_ disposition: String, _ expected: String) throws {
        let h = try EngineHarness()
        let body = serve(h, "/hostile", disposition: disposition)
        let url = h.url("/hostile")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.files == [expected])
        #expect(h.bytes(of: expected) == body.allBytes)
        let path = try #require(h.engine.filePath(ofTask: url))
        #expect(URL(fileURLWithPath: path).deletingLastPathComponent().path == h.downloads)
        // Nothing was written beside the download directory.
        let scratch = try FileManager.default.contentsOfDirectory(atPath: h.scratch.path)
        #expect(scratch == ["downloads"])
    }

    @Test func theURLPathNamesTheFileElseTheHost() throws {
        let h = try EngineHarness()
        _ = serve(h, "/a%20b/My%20File.PDF", disposition: nil)
        _ = serve(h, "/", disposition: nil)
        h.engine.download([h.url("/a%20b/My%20File.PDF"), h.url("/")])
        h.runUntilIdle()
        #expect(h.files == ["My File.PDF", "mock.test"])
    }

    @Test func aPreferredNameIsSanitizedToo() throws {
        let h = try EngineHarness()
        _ = serve(h, "/p.bin", disposition: "attachment; filename=\"server.bin\"")
        h.engine.download([DownloadItem(h.url("/p.bin"), preferredFileName: "../mine.bin")])
        #expect(h.engine.fileDisplayName(ofTask: h.url("/p.bin")) == "mine")
        h.runUntilIdle()
        #expect(h.files == ["mine.bin"])
    }

    @Test func aTakenNameIsNumberedByDefault() throws {
        let h = try EngineHarness()
        try Data("old".utf8).write(to: URL(fileURLWithPath: h.downloads + "/file.tar.gz"))
        _ = serve(h, "/x/file.tar.gz", disposition: nil)
        _ = serve(h, "/y/file.tar.gz", disposition: nil)
        h.engine.download([h.url("/x/file.tar.gz"), h.url("/y/file.tar.gz")])
        h.runUntilIdle()
        #expect(h.files == ["file (1).tar.gz", "file (2).tar.gz", "file.tar.gz"])
        #expect(h.bytes(of: "file.tar.gz") == Array("old".utf8), "the existing file is never touched")
        #expect(h.engine.task(h.url("/x/file.tar.gz"))?.record.fileName == "file (1).tar.gz")
        #expect(h.engine.filePath(ofTask: h.url("/y/file.tar.gz")) == h.downloads + "/file (2).tar.gz")
    }

    @Test func aNumberedLongNameStaysWithinTheLimit() throws {
        let h = try EngineHarness()
        let long = String(repeating: "x", count: 251) + ".txt"
        try Data().write(to: URL(fileURLWithPath: h.downloads + "/" + long))
        _ = serve(h, "/long", disposition: "attachment; filename=\"\(long)\"")
        h.engine.download([h.url("/long")])
        h.runUntilIdle()
        let name = try #require(h.engine.task(h.url("/long"))?.record.fileName)
        #expect(name.utf8.count <= 255)
        #expect(name.hasSuffix(" (1).txt"))
    }

    @Test func theReplacePolicyReplaces() throws {
        let h = try EngineHarness { $0.conflictPolicy = .replace }
        try Data("old".utf8).write(to: URL(fileURLWithPath: h.downloads + "/r.bin"))
        let body = serve(h, "/r.bin", disposition: nil)
        h.engine.download([h.url("/r.bin")])
        h.runUntilIdle()
        #expect(h.files == ["r.bin"])
        #expect(h.bytes(of: "r.bin") == body.allBytes)
    }

    @Test func theReplacePolicyNeverWritesThroughASymbolicLink() throws {
        let h = try EngineHarness { $0.conflictPolicy = .replace }
        let outside = h.scratch.path("outside.txt")
        try Data("outside".utf8).write(to: URL(fileURLWithPath: outside))
        try FileManager.default.createSymbolicLink(atPath: h.downloads + "/link.bin", withDestinationPath: outside)
        h.server.setRoute(.file(.empty), for: "/link.bin")
        h.engine.download([h.url("/link.bin")])
        h.runUntilIdle()
        #expect(FileManager.default.contents(atPath: outside) == Data("outside".utf8))
        #expect(h.bytes(of: "link.bin") == [])
    }

    @Test func theSkipPolicyFailsAtTheHeadAndKeepsTheExistingFile() throws {
        let h = try EngineHarness(chunkSize: 1000) { $0.conflictPolicy = .skip }
        try Data("mine".utf8).write(to: URL(fileURLWithPath: h.downloads + "/s.bin"))
        h.server.setRoute(
            .file(.generated(seed: 1, count: 1_000_000)).throttled(toBytesPerSecond: 10_000), for: "/s.bin")
        let url = h.url("/s.bin")
        h.engine.download([url])
        h.runUntilIdle()
        guard case .failed(let reason) = h.engine.state(ofTask: url) else {
            Issue.record("expected failed, got \(h.engine.state(ofTask: url))")
            return
        }
        #expect(reason.code == .fileExists)
        #expect(h.files == ["s.bin"])
        #expect(h.bytes(of: "s.bin") == Array("mine".utf8))
        #expect(h.transport.now < MockInstant(offset: .seconds(1)), "the body was not downloaded")
    }

    @Test func theFileKindComesFromTheClassifier() throws {
        let h = try EngineHarness {
            $0.fileKindClassifier = { name, mime in name.hasSuffix(".jpg") || mime == "image/png" ? .image : .other }
        }
        h.server.setRoute(MockRoute(headers: ["Content-Type": "image/png"], body: .bytes([1, 2])), for: "/pic")
        h.engine.download([h.url("/photo.jpg"), h.url("/pic")])
        #expect(h.engine.fileKind(ofTask: h.url("/photo.jpg")) == .image)
        #expect(h.engine.fileKind(ofTask: h.url("/pic")) == .other, "before the head, no MIME type")
        h.runUntilIdle()
        #expect(h.engine.fileKind(ofTask: h.url("/pic")) == .image)
    }

    /// The classifier gets the MIME type without parameters or blanks, lower-cased.
    @Test(arguments: [
        ("image/png", "image/png"), (" Image/PNG ; charset=x", "image/png"), ("\timage/png\t", "image/png"),
        ("image/png;", "image/png"), (" ; x", ""), ("IMAGE/Ä", "image/ä"),
    ])
    func theMIMETypeIsTheContentTypeWithoutItsParameters(_ header: String, _ expected: String) throws {
        let seen = Locked<[String]>([])
        let h = try EngineHarness {
            $0.fileKindClassifier = { _, mime in
                if let mime { seen.withLock { $0.append(mime) } }
                return .other
            }
        }
        h.server.setRoute(MockRoute(headers: ["Content-Type": header], body: .bytes([1])), for: "/pic")
        h.engine.download([h.url("/pic")])
        h.runUntilIdle()
        _ = h.engine.fileKind(ofTask: h.url("/pic"))
        // An empty type is no type.
        #expect(seen.withLock { $0 } == (expected.isEmpty ? [] : [expected]))
    }
}
