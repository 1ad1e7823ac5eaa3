import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import PeregrineTransport
import PeregrineVerification
import Testing

/// Checksums fetched from a checksum file beside the download (`.sha256`, `SHA256SUMS`), and
/// finished files checked again on demand.
@Suite("DownloadEngine checksum files")
struct EngineChecksumURLTests {
    static func sha256(_ bytes: [UInt8]) throws -> Checksum {
        try Checksum(.sha256, digest: StreamingHasher.digest(.sha256, of: bytes))
    }

    @Test func aSingleLineChecksumFileVerifiesTheDownload() throws {
        let h = try EngineHarness()
        let body = h.serve("/app.iso", count: 120_000)
        let checksum = try Self.sha256(body.allBytes)
        h.server.setRoute(.file(.text("\(checksum.hex)  app.iso\n")), for: "/app.iso.sha256")
        let url = h.url("/app.iso")
        h.engine.download([DownloadItem(url, checksumURL: h.url("/app.iso.sha256"))])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
        #expect(h.engine.task(url)?.record.checksum == checksum.description, "what was read is kept")
        #expect(h.engine.task(url)?.record.checksumURL == h.url("/app.iso.sha256"))
        #expect(h.server.requests.map(\.path) == ["/app.iso.sha256", "/app.iso"], "the checksum comes first")
    }

    @Test func aBareDigestTakesItsAlgorithmFromTheFileName() throws {
        let h = try EngineHarness()
        let body = h.serve("/app.bin", count: 1000)
        let digest = try StreamingHasher.digest(.sha512, of: body.allBytes)
        h.server.setRoute(.file(.text(digest.hexString.uppercased() + "\r\n")), for: "/app.bin.sha512")
        let url = h.url("/app.bin")
        h.engine.download([DownloadItem(url, checksumURL: h.url("/app.bin.sha512"))])
        h.runUntilIdle()
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
        #expect(h.engine.task(url)?.record.checksum?.hasPrefix("sha512=") == true)
    }

    @Test func aSumsListGivesEachFileItsOwnEntry() throws {
        let h = try EngineHarness()
        let one = h.serve("/dist/one.tar.gz", count: 30_000, seed: 1)
        let two = h.serve("/dist/two%20files.tar.gz", count: 40_000, seed: 2)
        let list = """
            # release 1.0
            \(try Self.sha256([7]).hex)  other.tar.gz
            \(try Self.sha256(two.allBytes).hex) *two files.tar.gz
            SHA256 (one.tar.gz) = \(try Self.sha256(one.allBytes).hex)
            """
        h.server.setRoute(.file(.text(list)), for: "/dist/SHA256SUMS")
        let sums = h.url("/dist/SHA256SUMS")
        let urls = [h.url("/dist/one.tar.gz"), h.url("/dist/two%20files.tar.gz")]
        h.engine.download(urls.map { DownloadItem($0, checksumURL: sums) })
        h.runUntilIdle()
        for url in urls {
            #expect(h.engine.state(ofTask: url) == .finished, "\(url)")
            #expect(h.engine.verificationResult(ofTask: url) == .verified, "\(url)")
        }
        #expect(h.visibleFiles == ["one.tar.gz", "two files.tar.gz"])
    }

    @Test func aListWithoutAnEntryForTheFileFailsBeforeDownloading() throws {
        let h = try EngineHarness()
        h.serve("/mine.bin", count: 1000)
        let list = "\(try Self.sha256([1]).hex)  a.bin\n\(try Self.sha256([2]).hex)  b.bin\n"
        h.server.setRoute(.file(.text(list)), for: "/SHA256SUMS")
        let url = h.url("/mine.bin")
        h.engine.download([DownloadItem(url, checksumURL: h.url("/SHA256SUMS"))])
        h.runUntilIdle()
        guard case .failed(let reason) = h.engine.state(ofTask: url) else {
            Issue.record("expected failed, got \(h.engine.state(ofTask: url))")
            return
        }
        #expect(reason.code == .verification)
        #expect(reason.message.contains("no checksum for file"), "\(reason.message)")
        #expect(reason.message.contains("mine.bin"), "\(reason.message)")
        #expect(h.server.requests(for: "/mine.bin").isEmpty, "not a byte of the file without its checksum")
        #expect(h.files.isEmpty)
    }

    @Test func aMissingChecksumFileFailsWithItsStatus() throws {
        let h = try EngineHarness()
        h.serve("/mine.bin", count: 1000)
        let url = h.url("/mine.bin")
        h.engine.download([DownloadItem(url, checksumURL: h.url("/mine.bin.sha256"))])
        h.runUntilIdle()
        guard case .failed(let reason) = h.engine.state(ofTask: url) else {
            Issue.record("expected failed, got \(h.engine.state(ofTask: url))")
            return
        }
        #expect(reason.code == .verification)
        #expect(reason.httpStatus == 404)
        #expect(reason.message.contains("checksum file unavailable"), "\(reason.message)")
        #expect(h.server.requests(for: "/mine.bin").isEmpty)
        #expect(h.completed.count == 1)

        // Once the checksum file is there, resuming fetches it again and downloads.
        let body = try #require(h.server.route(for: "/mine.bin")?.body)
        h.server.setRoute(.file(.text(try Self.sha256(body.allBytes).hex)), for: "/mine.bin.sha256")
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
    }

    @Test func anUnreadableOrOversizedChecksumFileFails() throws {
        let h = try EngineHarness()
        h.serve("/a.bin", count: 10)
        h.serve("/b.bin", count: 10)
        h.server.setRoute(.file(.text("<html>not found</html>\n<p>sorry</p>\n")), for: "/a.sha256")
        h.server.setRoute(
            .file(.generated(seed: 1, count: Int64(DownloadEngine.checksumFileSizeLimit) + 1)), for: "/b.sha256")
        h.engine.download([
            DownloadItem(h.url("/a.bin"), checksumURL: h.url("/a.sha256")),
            DownloadItem(h.url("/b.bin"), checksumURL: h.url("/b.sha256")),
        ])
        h.runUntilIdle()
        for (path, words) in [("/a.bin", "malformed checksum list"), ("/b.bin", "larger than")] {
            guard case .failed(let reason) = h.engine.state(ofTask: h.url(path)) else {
                Issue.record("expected \(path) to fail, got \(h.engine.state(ofTask: h.url(path)))")
                continue
            }
            #expect(reason.code == .verification)
            #expect(reason.message.contains(words), "\(reason.message)")
        }
        #expect(h.server.requests(for: "/a.bin").isEmpty)
        #expect(h.server.requests(for: "/b.bin").isEmpty)
    }

    @Test func anExplicitChecksumWinsOverAChecksumURL() throws {
        let h = try EngineHarness()
        let body = h.serve("/f.bin", count: 100)
        let url = h.url("/f.bin")
        h.engine.download([
            DownloadItem(url, checksum: try Self.sha256(body.allBytes).description, checksumURL: h.url("/f.sha256"))
        ])
        h.runUntilIdle()
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
        #expect(h.server.requests(for: "/f.sha256").isEmpty)
    }

    // MARK: verifyTasks

    @Test func verifyTasksFindsAFileChangedAfterItFinished() async throws {
        let h = try EngineHarness()
        let body = h.serve("/kept.bin", count: 50_000)
        h.serve("/plain.bin", count: 10)
        let url = h.url("/kept.bin")
        let expected = try Self.sha256(body.allBytes)
        h.engine.download([DownloadItem(url, checksum: expected.description), DownloadItem(h.url("/plain.bin"))])
        h.runUntilIdle()
        #expect(h.engine.verificationResult(ofTask: url) == .verified)

        let again = await h.engine.verifyTasks([url])
        #expect(try again[url]?.get() == .verified)

        var changed = body.allBytes
        changed[49_999] ^= 0xFF
        try Data(changed).write(to: URL(fileURLWithPath: h.downloads + "/kept.bin"))
        let results = await h.engine.verifyTasks([url, h.url("/plain.bin"), h.url("/unknown.bin")])
        let mismatch = VerificationResult.mismatch(expected: expected, actual: try Self.sha256(changed))
        #expect(try results[url]?.get() == mismatch)
        #expect(h.engine.verificationResult(ofTask: url) == mismatch, "the result is recorded")
        #expect(h.engine.state(ofTask: url) == .finished, "the task stays finished")
        for other in [h.url("/plain.bin"), h.url("/unknown.bin")] {
            guard case .failure(let error) = results[other] else {
                Issue.record("expected an error for \(other), got \(String(describing: results[other]))")
                continue
            }
            #expect(error.code == .nothingToVerify)
        }

        try FileManager.default.removeItem(atPath: h.downloads + "/kept.bin")
        let gone = await h.engine.verifyTasks([url])
        guard case .failure(let error) = gone[url] else {
            Issue.record("expected an error for a deleted file, got \(String(describing: gone[url]))")
            return
        }
        #expect(error.code == .unreadableFile)
    }
}
