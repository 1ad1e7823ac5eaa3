import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import PeregrineTransport
import Testing

/// The state edges that do I/O, on the manual mock transport: pause, stop, resume, restart,
/// delete, delete files, failures — and what each leaves on disk and sends to the server.
@Suite("DownloadEngine transitions")
struct EngineTransitionTests {
    static let size: Int64 = 1_000_000

    /// A harness with 10 KB chunks and a 1 MB file served at 100 KB/s (0.1 s per chunk).
    func slowHarness(
        entityTag: MockEntityTag = .fixed("\"v1\""),
        _ configure: (inout DownloadEngine.Configuration) -> Void = { _ in }
    ) throws -> (EngineHarness, MockBody, String) {
        let h = try EngineHarness(chunkSize: 10_000, configure)
        let body = MockBody.generated(seed: 3, count: Self.size)
        h.server.setRoute(.file(body, entityTag: entityTag).throttled(toBytesPerSecond: 100_000), for: "/a.bin")
        return (h, body, h.url("/a.bin"))
    }

    @Test func pauseKeepingTheConnectionSuspendsAndContinuesOnIt() throws {
        let (h, body, url) = try slowHarness()
        h.engine.download([url])
        h.advance(.seconds(1))
        #expect(h.engine.receivedByteCount(ofTask: url) == 100_000)

        #expect(h.engine.pauseTasks([url]).changed == [url])
        #expect(h.engine.state(ofTask: url) == .paused)
        #expect(h.engine.slotHolders() == [url])
        h.advance(.seconds(5))
        #expect(h.engine.receivedByteCount(ofTask: url) == 100_000, "nothing arrives while suspended")
        #expect(h.engine.downloadDetail(ofTask: url) == "100 KB/1 MB")

        #expect(h.engine.resumeTasks([url]).changed == [url])
        #expect(h.engine.state(ofTask: url) == .downloading)
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "a.bin") == body.allBytes)
        #expect(h.ranges("/a.bin") == ["- -"], "one request: the connection was kept")
    }

    @Test func pauseWithoutKeepingTheConnectionStopsWithAResumeRecord() throws {
        let (h, body, url) = try slowHarness { $0.pauseDownloadBySuspendingSessionTask = false }
        h.engine.download([url])
        h.advance(.milliseconds(1500))
        #expect(h.engine.pauseTasks([url]).changed == [url])
        #expect(h.engine.state(ofTask: url) == .stopped)
        h.advance(.zero)  // the cancellation drains

        let record = try #require(h.engine.task(url)?.record.resumeRecord)
        #expect(record.offset == 150_000)
        #expect(record.validator == .entityTag("\"v1\""))
        #expect(record.expectedLength == Self.size)
        #expect(h.temporaryBytes(of: url) == body.bytes(in: 0..<150_000), "the record never exceeds the file")
        #expect(h.engine.receivedByteCount(ofTask: url) == 150_000)
        #expect(h.visibleFiles.isEmpty)

        #expect(h.engine.resumeTasks([url]).changed == [url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "a.bin") == body.allBytes)
        #expect(h.ranges("/a.bin") == ["- -", "bytes=150000- \"v1\""])
        #expect(h.files == ["a.bin"])
    }

    @Test func checkpointsMoveTheResumeRecordToTheSyncedOffset() throws {
        let (h, body, url) = try slowHarness {
            $0.checkpoint = CheckpointPolicy(interval: .seconds(1), byteThreshold: 250_000)
        }
        h.engine.download([url])
        h.advance(.milliseconds(500))
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 0, "no checkpoint yet")
        h.advance(.milliseconds(500))
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 100_000, "one second passed")
        h.advance(.milliseconds(500))
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 100_000)
        h.advance(.milliseconds(500))
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 200_000)
        #expect((h.temporaryBytes(of: url)?.count ?? 0) >= 200_000)
        #expect(h.temporaryBytes(of: url).map { Array($0.prefix(200_000)) } == body.bytes(in: 0..<200_000))
        h.advance(.milliseconds(900))
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 200_000)
        h.advance(.milliseconds(100))
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 300_000)
    }

    @Test func aByteThresholdCheckpointsBeforeTheInterval() throws {
        let (h, _, url) = try slowHarness {
            $0.checkpoint = CheckpointPolicy(interval: .seconds(60), byteThreshold: 30_000)
        }
        h.engine.download([url])
        h.advance(.milliseconds(300))
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 30_000)
        h.advance(.milliseconds(300))
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 60_000)
    }

    @Test func stopWithoutAValidatorGoesPendingWithProgressZero() throws {
        let (h, body, url) = try slowHarness(entityTag: .none)
        h.engine.download([url])
        h.advance(.seconds(1))
        #expect(h.engine.stopTasks([url]).changed == [url])
        #expect(h.engine.state(ofTask: url) == .pending)
        h.advance(.zero)
        #expect(h.engine.task(url)?.record.resumeRecord == nil)
        #expect(h.engine.receivedByteCount(ofTask: url) == 0)
        #expect(h.files.isEmpty, "no resume record: the partial file is gone")

        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.bytes(of: "a.bin") == body.allBytes)
        #expect(h.ranges("/a.bin") == ["- -", "- -"], "no Range without a validator")
    }

    @Test func stopOfAPausedTaskKeepsTheRecord() throws {
        let (h, body, url) = try slowHarness()
        h.engine.download([url])
        h.advance(.seconds(1))
        h.engine.pauseTasks([url])
        #expect(h.engine.stopTasks([url]).changed == [url])
        #expect(h.engine.state(ofTask: url) == .stopped)
        h.advance(.zero)
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 100_000)
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.bytes(of: "a.bin") == body.allBytes)
    }

    @Test func restartOfAFinishedTaskDeletesTheFileAndDownloadsAgain() throws {
        let h = try EngineHarness()
        let body = h.serve("/r.bin", count: 5000)
        let url = h.url("/r.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.files == ["r.bin"])
        #expect(h.engine.restartTasks([url]).changed == [url])
        #expect(h.files.isEmpty, "the finished file is deleted first")
        #expect(h.engine.state(ofTask: url) == .downloading)
        h.runUntilIdle()
        #expect(h.files == ["r.bin"], "not r (1).bin: the old file was the task's own")
        #expect(h.bytes(of: "r.bin") == body.allBytes)
        #expect(h.ranges("/r.bin") == ["- -", "- -"])
    }

    @Test func restartOfAStoppedTaskDropsTheResumeRecord() throws {
        let (h, body, url) = try slowHarness()
        h.engine.download([url])
        h.advance(.seconds(1))
        h.engine.stopTasks([url])
        h.advance(.zero)
        #expect(h.engine.task(url)?.record.resumeRecord != nil)
        #expect(h.engine.restartTasks([url]).changed == [url])
        #expect(h.engine.task(url)?.record.resumeRecord == nil)
        h.runUntilIdle()
        #expect(h.bytes(of: "a.bin") == body.allBytes)
        #expect(h.ranges("/a.bin") == ["- -", "- -"])
    }

    @Test func restartBeforeTheStopDrainedWaitsForIt() throws {
        let (h, body, url) = try slowHarness()
        h.engine.download([url])
        h.advance(.seconds(1))
        h.engine.stopTasks([url])
        h.engine.restartTasks([url])  // the stopped transfer has not delivered its completion yet
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "a.bin") == body.allBytes)
        #expect(h.ranges("/a.bin") == ["- -", "- -"])
        #expect(h.files == ["a.bin"])
    }

    @Test func resumeBeforeTheStopDrainedContinuesFromTheSyncedOffset() throws {
        let (h, body, url) = try slowHarness()
        h.engine.download([url])
        h.advance(.milliseconds(1500))
        h.engine.stopTasks([url])
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.bytes(of: "a.bin") == body.allBytes)
        #expect(h.ranges("/a.bin") == ["- -", "bytes=150000- \"v1\""])
    }

    @Test func aNotFoundFailsWithTheStatusAndLeavesNoFile() async throws {
        let h = try EngineHarness()
        let url = h.url("/missing.bin")
        h.engine.download([url])
        h.runUntilIdle()
        guard case .failed(let reason) = h.engine.state(ofTask: url) else {
            Issue.record("expected failed, got \(h.engine.state(ofTask: url))")
            return
        }
        #expect(reason.code == .httpStatus)
        #expect(reason.httpStatus == 404)
        #expect(h.files.isEmpty, "a 404 body is never a file, and no temporary file is left")
        #expect(h.engine.downloadDetail(ofTask: url) == reason.description)
        #expect(h.completed.count == 1)
        if case .failure(let delivered) = h.completed.first?.1 { #expect(delivered == reason) }
        let events = await h.recorder.wait(for: url, count: 3)
        #expect(events.last == .failed(url, reason))
    }

    @Test func aFailedTaskRestartsAfterTheServerIsFixed() throws {
        let h = try EngineHarness()
        let url = h.url("/later.bin")
        h.engine.download([url])
        h.runUntilIdle()
        let body = h.serve("/later.bin", count: 3000)
        #expect(h.engine.restartTasks([url]).changed == [url])
        h.runUntilIdle()
        #expect(h.bytes(of: "later.bin") == body.allBytes)
    }

    @Test func aDroppedConnectionFailsWithARecordAndResumingCompletesTheExactBody() throws {
        let h = try EngineHarness(chunkSize: 10_000)
        let body = MockBody.generated(seed: 11, count: 400_000)
        h.server.setRoutes(
            [
                MockRoute.file(body, entityTag: .fixed("\"d\"")).faulting(.dropAfter(bytes: 123_457)),
                .file(body, entityTag: .fixed("\"d\"")),
            ], for: "/drop.bin")
        let url = h.url("/drop.bin")
        h.engine.download([url])
        h.runUntilIdle()
        guard case .failed(let reason) = h.engine.state(ofTask: url) else {
            Issue.record("expected failed, got \(h.engine.state(ofTask: url))")
            return
        }
        #expect(reason.code == .network)
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 123_457)
        #expect(h.temporaryBytes(of: url) == body.bytes(in: 0..<123_457))
        #expect(h.visibleFiles.isEmpty)

        #expect(h.engine.resumeTasks([url]).changed == [url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "drop.bin") == body.allBytes)
        #expect(h.ranges("/drop.bin") == ["- -", "bytes=123457- \"d\""])
        #expect(h.files == ["drop.bin"])
    }

    @Test func aChangedEntityTagRestartsFromZeroWithTheNewBody() throws {
        let h = try EngineHarness(chunkSize: 10_000)
        let old = MockBody.generated(seed: 1, count: 400_000)
        let new = MockBody.generated(seed: 2, count: 350_000)
        h.server.setRoutes(
            [
                MockRoute.file(old, entityTag: .fixed("\"v1\"")).faulting(.dropAfter(bytes: 300_000)),
                .file(new, entityTag: .fixed("\"v2\"")),
            ], for: "/c.bin")
        let url = h.url("/c.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 300_000)

        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "c.bin") == new.allBytes, "never a splice of two versions")
        #expect(h.ranges("/c.bin") == ["- -", "bytes=300000- \"v1\"", "- -"])
        #expect(h.engine.fileByteCount(ofTask: url) == 350_000)
    }

    /// A server that ignores `If-Range` answers the resumed range of a changed file with a 206
    /// of the new version: its bytes must never be appended to the old partial file, whether the
    /// version shows in the `ETag`, only in `Last-Modified`, or only in the complete length.
    @Test(arguments: ["etag", "date", "length"])
    func a206OfAnotherVersionRestartsFromZeroInsteadOfSplicing(changed: String) throws {
        let h = try EngineHarness(chunkSize: 16_384)
        let old = MockBody.generated(seed: 11, count: 400_000)
        let new = MockBody.generated(seed: 12, count: changed == "length" ? 450_000 : 400_000)
        let (oldRoute, newRoute): (MockRoute, MockRoute) =
            switch changed {
            case "etag": (.file(old, entityTag: .fixed("\"A\"")), .file(new, entityTag: .fixed("\"B\"")))
            case "date":
                (
                    .file(old, lastModified: "Mon, 02 Nov 2026 10:00:00 GMT"),
                    .file(new, lastModified: "Tue, 03 Nov 2026 10:00:00 GMT")
                )
            default: (.file(old, entityTag: .fixed("\"A\"")), .file(new, entityTag: .fixed("\"A\"")))
            }
        h.server.setRoutes(
            [oldRoute.faulting(.dropAfter(bytes: 196_608)), newRoute.faulting(.ignoreIfRange)], for: "/v.bin")
        let url = h.url("/v.bin")
        h.engine.download([url])
        h.runUntilIdle()
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 196_608)

        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "v.bin") == new.allBytes, "never a splice of two versions")
        let ranges = h.ranges("/v.bin")
        #expect(ranges.count == 3 && ranges.first == "- -" && ranges.last == "- -", "\(ranges)")
        #expect(ranges[1].hasPrefix("bytes=196608- "), "\(ranges)")
    }

    /// The same with the download split over several connections: the resumed pieces are
    /// refused alike and the whole file comes again.
    @Test func aSplitDownloadResumedAgainstA206OfAnotherVersionRestartsFromZero() throws {
        let h = try EngineHarness(chunkSize: 16_384) { configuration in
            configuration.segmentation = Segmentation(maxConnectionsPerTask: 4, minimumSegmentSize: 64 << 10)
        }
        let old = MockBody.generated(seed: 13, count: 1 << 20)
        let new = MockBody.generated(seed: 14, count: 1 << 20)
        h.server.setRoute(
            MockRoute.file(old, entityTag: .fixed("\"A\"")).faulting(.dropAfter(bytes: 65_536)), for: "/s.bin")
        let url = h.url("/s.bin")
        h.engine.download([url])
        h.runUntilIdle()
        let kept = h.engine.task(url)?.record.resumeRecord
        #expect(
            kept != nil && (kept!.offset > 0 || !kept!.completedRanges.isEmpty),
            "nothing to resume: \(String(describing: kept))")

        h.server.clearRequests()
        h.server.setRoute(MockRoute.file(new, entityTag: .fixed("\"B\"")).faulting(.ignoreIfRange), for: "/s.bin")
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "s.bin") == new.allBytes, "never a splice of two versions")
        let resumed = h.server.requests(for: "/s.bin").filter { $0.headers["If-Range"] == "\"A\"" }
        #expect(!resumed.isEmpty, "the second run never resumed the first version's bytes")
    }

    @Test func anEntityTagThatChangesOnEveryRequestRestartsFromZeroOnce() throws {
        let h = try EngineHarness(chunkSize: 10_000)
        let body = MockBody.generated(seed: 5, count: 200_000)
        h.server.setRoutes(
            [
                MockRoute.file(body, entityTag: .changesOnEveryRequest).faulting(.dropAfter(bytes: 50_000)),
                .file(body, entityTag: .changesOnEveryRequest),
            ], for: "/e.bin")
        let url = h.url("/e.bin")
        h.engine.download([url])
        h.runUntilIdle()
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "e.bin") == body.allBytes)
        #expect(h.ranges("/e.bin") == ["- -", "bytes=50000- \"1\"", "- -"])
    }

    @Test func aServerThatIgnoresTheRangeMakesTheDownloadStartOver() throws {
        let h = try EngineHarness(chunkSize: 10_000)
        let body = MockBody.generated(seed: 6, count: 100_000)
        h.server.setRoutes(
            [
                MockRoute.file(body, entityTag: .fixed("\"i\"")).faulting(.dropAfter(bytes: 30_000)),
                MockRoute.file(body, entityTag: .fixed("\"i\"")).faulting(.ignoreRange),
            ], for: "/i.bin")
        let url = h.url("/i.bin")
        h.engine.download([url])
        h.runUntilIdle()
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.bytes(of: "i.bin") == body.allBytes)
        #expect(h.ranges("/i.bin") == ["- -", "bytes=30000- \"i\"", "- -"])
    }

    @Test func deletingADownloadingTaskRemovesItsPartialFile() async throws {
        let (h, _, url) = try slowHarness()
        h.engine.download([url])
        h.advance(.seconds(1))
        #expect(h.engine.deleteTasks([url]).changed == [url])
        #expect(h.engine.state(ofTask: url) == .notInList)
        h.runUntilIdle()
        #expect(h.files.isEmpty)
        #expect(h.engine.urlStrings().isEmpty)
        #expect(h.completed.isEmpty, "deleting is not a failure")
        await h.recorder.wait { $0.contains(.deleted(url)) }
    }

    @Test func deletingAFinishedTaskKeepsItsFileOnlyWhenAsked() throws {
        let h = try EngineHarness()
        h.serve("/k.bin", count: 100)
        h.serve("/d.bin", count: 100)
        h.engine.download([h.url("/k.bin"), h.url("/d.bin")])
        h.runUntilIdle()
        #expect(h.engine.deleteTasks([h.url("/k.bin")], keepFinishedFile: true).changed == [h.url("/k.bin")])
        #expect(h.engine.deleteTasks([h.url("/d.bin")]).changed == [h.url("/d.bin")])
        #expect(h.files == ["k.bin"])
        // The same URL may be added again once deleted.
        #expect(h.engine.download([h.url("/d.bin")]).added == [h.url("/d.bin")])
    }

    @Test func deletingFilesKeepsTheTasksPending() throws {
        let (h, _, url) = try slowHarness()
        h.serve("/f.bin", count: 100)
        let finished = h.url("/f.bin")
        h.engine.download([url, finished])
        h.advance(.seconds(1))
        #expect(h.engine.state(ofTask: finished) == .finished)
        let result = h.engine.deleteFilesOfTasks([url, finished, h.url("/unknown")])
        #expect(result.changed == [url, finished])
        #expect(result.error(for: h.url("/unknown"))?.code == .unknownTask)
        h.advance(.zero)
        #expect(h.engine.state(ofTask: url) == .pending)
        #expect(h.engine.state(ofTask: finished) == .pending)
        #expect(h.engine.receivedByteCount(ofTask: url) == 0)
        #expect(h.files.isEmpty)
        #expect(h.engine.deleteFilesOfTasks([finished]).changed == [finished], "a pending task counts, as in SDE")
    }

    @Test func illegalOperationsAreTypedAndChangeNothing() throws {
        let h = try EngineHarness { $0.downloadNewFileImmediately = false }
        h.serve("/x.bin", count: 10)
        let url = h.url("/x.bin")
        h.engine.download([url])
        let pause = h.engine.pauseTasks([url])
        #expect(pause.changed.isEmpty)
        #expect(pause.rejected.first?.code == .illegalTransition)
        #expect(pause.rejected.first?.transition?.state == .pending)
        #expect(h.engine.stopTasks([url]).rejected.count == 1)
        #expect(h.engine.restartTasks([url]).rejected.count == 1)
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        let resume = h.engine.resumeTasks([url, h.url("/other")])
        #expect(resume.changed.isEmpty)
        #expect(resume.error(for: url)?.transition?.state == .finished)
        #expect(resume.error(for: h.url("/other"))?.code == .unknownTask)
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.server.requests.count == 1)
    }

    @Test func aCompleteFileAnswered416Finishes() throws {
        let h = try EngineHarness()
        let body = h.serve("/whole.bin", count: 4000)
        let url = h.url("/whole.bin")
        let temporary = ".peregrine-00000000000000aa.part"
        try Data(body.allBytes).write(to: URL(fileURLWithPath: h.downloads + "/" + temporary))
        let record = DownloadTaskRecord(
            urlString: url, state: .stopped,
            resumeRecord: ResumeRecord(offset: 4000, validator: .entityTag("\"v1\""), expectedLength: 4000),
            fileName: "whole.bin", temporaryFileName: temporary, expectedLength: 4000, addedAt: EngineHarness.date)
        #expect(h.engine.restore([record]).restored == [url])
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "whole.bin") == body.allBytes)
        #expect(h.ranges("/whole.bin") == ["bytes=4000- \"v1\""])
        #expect(h.files == ["whole.bin"])
    }

    /// A finished file cut (or grown) since it was placed is not the file that was downloaded:
    /// restored, its task comes back pending with the name free, and starting it downloads the
    /// file again under the same name (no `NAME (1)`); an intact one stays finished.
    @Test(arguments: [1000, 4500])
    func aFinishedFileThatChangedSizeIsDownloadedAgainUnderItsName(size: Int) throws {
        let h = try EngineHarness()
        let body = h.serve("/cut.bin", count: 4000)
        h.serve("/intact.bin", count: 300)
        let url = h.url("/cut.bin")
        let intact = h.url("/intact.bin")
        try Data(Array(body.allBytes.prefix(size)) + [UInt8](repeating: 7, count: max(0, size - 4000)))
            .write(to: URL(fileURLWithPath: h.downloads + "/cut.bin"))
        try Data(repeating: 3, count: 300).write(to: URL(fileURLWithPath: h.downloads + "/intact.bin"))
        let records = [
            DownloadTaskRecord(
                urlString: url, state: .finished, fileName: "cut.bin",
                temporaryFileName: ".peregrine-00000000000000cc.part",
                expectedLength: 4000, addedAt: EngineHarness.date),
            DownloadTaskRecord(
                urlString: intact, state: .finished, fileName: "intact.bin",
                temporaryFileName: ".peregrine-00000000000000dd.part", expectedLength: 300, addedAt: EngineHarness.date),
        ]
        let result = h.engine.restore(records)
        #expect(result.restored == [url, intact])
        #expect(result.recovered == [url])
        #expect(h.engine.state(ofTask: url) == .pending)
        #expect(h.engine.state(ofTask: intact) == .finished)
        #expect(!h.files.contains("cut.bin"), "the changed file keeps its name")
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "cut.bin") == body.allBytes)
        #expect(h.files == ["cut.bin", "intact.bin"])
        #expect(h.server.requests(for: "/intact.bin").isEmpty)
    }

    @Test func aWrongPartialFileAnswered416StartsOver() throws {
        let h = try EngineHarness()
        let body = h.serve("/shrunk.bin", count: 3000)
        let url = h.url("/shrunk.bin")
        let temporary = ".peregrine-00000000000000bb.part"
        try Data(repeating: 1, count: 5000).write(to: URL(fileURLWithPath: h.downloads + "/" + temporary))
        let record = DownloadTaskRecord(
            urlString: url, state: .stopped,
            resumeRecord: ResumeRecord(offset: 5000, validator: .entityTag("\"v1\""), expectedLength: 5000),
            temporaryFileName: temporary, addedAt: EngineHarness.date)
        h.engine.restore([record])
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.bytes(of: "shrunk.bin") == body.allBytes)
        #expect(h.ranges("/shrunk.bin") == ["bytes=5000- \"v1\"", "- -"])
    }
}
