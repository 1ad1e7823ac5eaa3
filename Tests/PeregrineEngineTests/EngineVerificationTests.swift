import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import PeregrineTransport
import PeregrineVerification
import Synchronization
import Testing

/// Checksums while downloading, on the manual mock transport: the verdict, mismatched files
/// kept aside, Reed's retries from zero, resume, and validation when a task is added.
@Suite("DownloadEngine verification")
struct EngineVerificationTests {
    static func sha256(_ bytes: [UInt8]) throws -> Checksum {
        try Checksum(.sha256, digest: StreamingHasher.digest(.sha256, of: bytes))
    }

    /// The reason of a failed task, or nil (recorded as an issue) when it did not fail.
    static func failure(
        _ h: EngineHarness, _ url: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> FailureReason? {
        guard case .failed(let reason) = h.engine.state(ofTask: url) else {
            Issue.record("expected failed, got \(h.engine.state(ofTask: url))", sourceLocation: sourceLocation)
            return nil
        }
        return reason
    }

    @Test func aMatchingChecksumFinishesVerified() async throws {
        let h = try EngineHarness()
        let body = h.serve("/ok.bin", count: 300_000)
        let url = h.url("/ok.bin")
        let checksum = try Self.sha256(body.allBytes)
        let added = h.engine.download([DownloadItem(url, checksum: checksum.description)])
        #expect(added.added == [url])
        #expect(h.engine.verificationResult(ofTask: url) == .unverified)
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
        #expect(h.engine.task(url)?.record.verification == .verified)
        #expect(h.bytes(of: "ok.bin") == body.allBytes)
        #expect(h.files == ["ok.bin"])
    }

    @Test func anUpperCaseChecksumOfAnotherAlgorithmVerifiesToo() throws {
        let h = try EngineHarness()
        let body = h.serve("/ok.bin", count: 70_000)
        let digest = try StreamingHasher.digest(.sha512, of: body.allBytes)
        let url = h.url("/ok.bin")
        h.engine.download([DownloadItem(url, checksum: "SHA-512:" + digest.hexString.uppercased())])
        h.runUntilIdle()
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
    }

    @Test func anEmptyFileVerifies() throws {
        let h = try EngineHarness()
        h.serve("/empty.bin", count: 0)
        let url = h.url("/empty.bin")
        h.engine.download([DownloadItem(url, checksum: try Self.sha256([]).description)])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
    }

    @Test func aMismatchFailsKeepsTheFileAsideAndStoresTheResult() async throws {
        let h = try EngineHarness { $0.verificationRetry = .never }
        let body = h.serve("/bad.bin", count: 200_000)
        let url = h.url("/bad.bin")
        let actual = try Self.sha256(body.allBytes)
        let expected = try Self.sha256(Array("something else".utf8))
        h.engine.download([DownloadItem(url, checksum: expected.description)])
        h.runUntilIdle()
        let reason = try #require(Self.failure(h, url))
        #expect(reason.code == .verification)
        #expect(reason.message.contains(expected.hex), "\(reason.message)")
        #expect(reason.message.contains(actual.hex), "\(reason.message)")
        #expect(reason.message.contains("bad.bin.mismatch"), "\(reason.message)")
        #expect(h.files == ["bad.bin.mismatch"], "never renamed into place; no temporary file left")
        #expect(h.bytes(of: "bad.bin.mismatch") == body.allBytes)
        #expect(h.engine.verificationResult(ofTask: url) == .mismatch(expected: expected, actual: actual))
        #expect(h.engine.task(url)?.mismatchCount == 1)
        #expect(h.server.requests(for: "/bad.bin").count == 1)
        #expect(h.completed.count == 1)
        let events = await h.recorder.wait(for: url, count: 3)
        #expect(events.last == .failed(url, reason))
    }

    @Test func aMismatchedFileIsDeletedWhenThePolicySaysSo() throws {
        let h = try EngineHarness {
            $0.verificationRetry = VerificationRetryPolicy(maxAttempts: 1, mismatchedFile: .delete)
        }
        h.serve("/bad.bin", count: 5000)
        let url = h.url("/bad.bin")
        h.engine.download([DownloadItem(url, checksum: try Self.sha256([1, 2, 3]).description)])
        h.runUntilIdle()
        #expect(Self.failure(h, url)?.code == .verification)
        #expect(h.files.isEmpty)
        if case .mismatch = h.engine.verificationResult(ofTask: url) {
        } else {
            Issue.record("expected a mismatch, got \(String(describing: h.engine.verificationResult(ofTask: url)))")
        }
    }

    @Test func aMismatchIsRetriedFromZeroUntilTheServerSendsTheRightBytes() async throws {
        let h = try EngineHarness()
        let wrong = MockBody.generated(seed: 1, count: 100_000)
        let right = MockBody.generated(seed: 2, count: 100_000)
        h.server.setRoutes(
            [.file(wrong, entityTag: .fixed("\"a\"")), .file(wrong, entityTag: .fixed("\"a\"")), .file(right)],
            for: "/flaky.bin")
        let url = h.url("/flaky.bin")
        h.engine.download([DownloadItem(url, checksum: try Self.sha256(right.allBytes).description)])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.bytes(of: "flaky.bin") == right.allBytes)
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
        #expect(h.engine.task(url)?.mismatchCount == 2, "two mismatches before the match")
        #expect(h.ranges("/flaky.bin") == ["- -", "- -", "- -"], "every retry starts from zero")
        #expect(h.files == ["flaky.bin"])
        let events = await h.recorder.wait {
            $0.contains(.finished(url, file: URL(filePath: h.downloads + "/flaky.bin")))
        }
        let starts = events.filter { if case .started(url, 0) = $0 { true } else { false } }
        #expect(starts.count == 3)
    }

    @Test func retriesStopAfterThePolicysAttemptsAndAreCounted() throws {
        let h = try EngineHarness()
        let body = h.serve("/always.bin", count: 50_000)
        let url = h.url("/always.bin")
        let expected = try Self.sha256([0])
        h.engine.download([DownloadItem(url, checksum: expected.description)])
        h.runUntilIdle()
        let reason = try #require(Self.failure(h, url))
        #expect(reason.code == .verification)
        #expect(reason.message.contains("download 3 of at most 3"), "\(reason.message)")
        #expect(h.server.requests(for: "/always.bin").count == 3, "Reed: three downloads in all")
        #expect(h.engine.task(url)?.mismatchCount == 3)
        #expect(h.files == ["always.bin.mismatch"])
        #expect(
            h.engine.verificationResult(ofTask: url)
                == .mismatch(expected: expected, actual: try Self.sha256(body.allBytes)))

        // Restarting counts afresh.
        h.server.setRoute(.file(body), for: "/always.bin")
        h.engine.restartTasks([url])
        #expect(h.engine.task(url)?.mismatchCount == 0)
        #expect(h.engine.verificationResult(ofTask: url) == .unverified)
    }

    @Test func aTasksOwnPolicyOverridesTheEngines() throws {
        let h = try EngineHarness { $0.verificationRetry = VerificationRetryPolicy(maxAttempts: 5) }
        h.serve("/once.bin", count: 1000)
        h.serve("/twice.bin", count: 1000)
        let wrong = try Self.sha256([9]).description
        h.engine.download([
            DownloadItem(h.url("/once.bin"), checksum: wrong, verificationRetry: .never),
            DownloadItem(
                h.url("/twice.bin"), checksum: wrong, verificationRetry: VerificationRetryPolicy(maxAttempts: 2)),
        ])
        h.runUntilIdle()
        #expect(h.server.requests(for: "/once.bin").count == 1)
        #expect(h.server.requests(for: "/twice.bin").count == 2)
        #expect(h.engine.task(h.url("/twice.bin"))?.record.verificationRetry?.maxAttempts == 2)
    }

    /// Retries once more whatever failed, and records what it was asked.
    final class OneMoreRetry: RetryPolicy, @unchecked Sendable {
        let asked = Shared<[String]>([])
        func decision(after failure: TransferFailure, for task: TaskContext) -> RetryDecision {
            asked.withLock { $0.append("\(failure.reason.code) \(task.retryCount)") }
            return task.retryCount < 2 ? .retry : .fail
        }
    }

    @Test func theRetryPolicyIsAskedOnceTheVerificationPolicyGivesUp() throws {
        let policy = OneMoreRetry()
        let h = try EngineHarness {
            $0.retryPolicy = policy
            $0.verificationRetry = VerificationRetryPolicy(maxAttempts: 2)
        }
        h.serve("/x.bin", count: 1000)
        let url = h.url("/x.bin")
        h.engine.download([DownloadItem(url, checksum: try Self.sha256([9]).description)])
        h.runUntilIdle()
        #expect(Self.failure(h, url)?.code == .verification)
        // Attempt 1: Reed's rule retries; attempt 2: the rule gives up and the policy retries
        // (retryCount 1); attempt 3: the policy gives up (retryCount 2).
        #expect(h.server.requests(for: "/x.bin").count == 3)
        #expect(policy.asked.withLock { $0 } == ["verification 1", "verification 2"])
    }

    @Test func aResumedDownloadHashesTheBytesOnDiskFirst() throws {
        let h = try EngineHarness(chunkSize: 10_000) { $0.pauseDownloadBySuspendingSessionTask = false }
        let body = MockBody.generated(seed: 3, count: 1_000_000)
        h.server.setRoute(.file(body, entityTag: .fixed("\"v1\"")).throttled(toBytesPerSecond: 100_000), for: "/a.bin")
        let url = h.url("/a.bin")
        h.engine.download([DownloadItem(url, checksum: try Self.sha256(body.allBytes).description)])
        h.advance(.milliseconds(1500))
        #expect(h.engine.pauseTasks([url]).changed == [url])
        h.advance(.zero)
        #expect(h.engine.task(url)?.record.resumeRecord?.offset == 150_000)
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.ranges("/a.bin") == ["- -", "bytes=150000- \"v1\""])
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.verificationResult(ofTask: url) == .verified, "the digest covers the first 150 KB too")
        #expect(h.bytes(of: "a.bin") == body.allBytes)
    }

    @Test func aCorruptedPartialFileIsCaughtAfterTheResume() throws {
        let h = try EngineHarness(chunkSize: 10_000) {
            $0.pauseDownloadBySuspendingSessionTask = false
            $0.verificationRetry = .never
        }
        let body = MockBody.generated(seed: 3, count: 400_000)
        h.server.setRoute(.file(body, entityTag: .fixed("\"v1\"")).throttled(toBytesPerSecond: 100_000), for: "/a.bin")
        let url = h.url("/a.bin")
        h.engine.download([DownloadItem(url, checksum: try Self.sha256(body.allBytes).description)])
        h.advance(.milliseconds(1500))
        h.engine.stopTasks([url])
        h.advance(.zero)
        // A bit flips on disk while the task is stopped: the bytes that arrived were right, the
        // file is not.
        let path = try #require(h.engine.temporaryFilePath(ofTask: url))
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 1234)
        try handle.write(contentsOf: Data([body.bytes(in: 1234..<1235)[0] ^ 0x01]))
        try handle.close()
        h.engine.resumeTasks([url])
        h.runUntilIdle()
        #expect(h.ranges("/a.bin").last == "bytes=150000- \"v1\"")
        #expect(Self.failure(h, url)?.code == .verification)
        #expect(h.files == ["a.bin.mismatch"])
    }

    @Test func invalidChecksumsAreRefusedWhenAdded() throws {
        let h = try EngineHarness()
        let good = try Self.sha256(h.serve("/f.bin", count: 10).allBytes).description
        let items = [
            DownloadItem(h.url("/1.bin"), checksum: "md6=" + String(repeating: "a", count: 32)),
            DownloadItem(h.url("/2.bin"), checksum: "sha256=abcd"),
            DownloadItem(h.url("/3.bin"), checksum: "sha256=" + String(repeating: "g", count: 64)),
            DownloadItem(h.url("/4.bin"), checksum: ""),
            DownloadItem(h.url("/5.bin"), checksum: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
            DownloadItem(h.url("/6.bin"), checksumURL: "ftp://example.com/SHA256SUMS"),
            DownloadItem("not a url", checksum: "md6=1"),
            DownloadItem(h.url("/f.bin"), checksum: good),
        ]
        let result = h.engine.download(items)
        #expect(result.added == [h.url("/f.bin")])
        #expect(result.invalid.map(\.urlString) == ["not a url"], "the URL is checked first")
        #expect(
            result.invalidChecksums.map(\.error.code) == [
                .unsupportedAlgorithm, .wrongDigestLength, .invalidHex, .emptyChecksum, .malformedChecksum,
                .checksumFileUnavailable,
            ])
        #expect(result.invalidChecksums.map(\.urlString) == (1...6).map { h.url("/\($0).bin") })
        #expect(result.invalidChecksums[1].checksum == "sha256=abcd")
        #expect(h.engine.urlStrings() == [h.url("/f.bin")], "refused items change nothing")
        h.runUntilIdle()
        #expect(h.server.requests.map(\.path) == ["/f.bin"])
        #expect(h.engine.verificationResult(ofTask: h.url("/f.bin")) == .verified)
    }

    @Test func checksumsAreNotCheckedWhenVerificationIsOff() throws {
        let h = try EngineHarness { $0.verifiesChecksums = false }
        h.serve("/f.bin", count: 10)
        let url = h.url("/f.bin")
        #expect(h.engine.download([DownloadItem(url, checksum: "sha256=00")]).added == [url])
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: url) == .finished)
        #expect(h.engine.verificationResult(ofTask: url) == .unverified)
    }

    @Test func anEngineWithoutDigestsRefusesChecksumsItCannotCheck() async throws {
        let h = try EngineHarness { $0.digests = nil }
        h.serve("/f.bin", count: 10)
        h.serve("/g.bin", count: 10)
        let checked = h.url("/f.bin")
        let plain = h.url("/g.bin")
        let sums = DownloadItem(h.url("/h.bin"), checksumURL: h.url("/SHA256SUMS"))
        let result = h.engine.download([
            DownloadItem(checked, checksum: "sha256=" + String(repeating: "0", count: 64)), DownloadItem(plain), sums,
        ])
        #expect(result.added == [plain])
        #expect(result.invalidChecksums.map(\.urlString) == [checked, sums.urlString])
        #expect(result.invalidChecksums.allSatisfy { $0.error.code == .unsupportedAlgorithm })
        #expect(result.invalidChecksums.first?.error.message.contains("digests") == true)
        h.runUntilIdle()
        #expect(h.engine.state(ofTask: plain) == .finished)
        let verified = await h.engine.verifyTasks([plain])
        guard case .failure(let error) = verified[plain] else {
            Issue.record("verifyTasks without digests gave \(String(describing: verified[plain]))")
            return
        }
        #expect(error.code == .unsupportedAlgorithm)
    }

    @Test func anEngineWithoutDigestsDoesNotRestoreATaskItCannotCheck() throws {
        let h = try EngineHarness { $0.digests = nil }
        let checked = DownloadTaskRecord(
            urlString: h.url("/f.bin"), state: .stopped, temporaryFileName: ".f.part",
            checksum: "sha256=" + String(repeating: "0", count: 64), addedAt: EngineHarness.date)
        let plain = DownloadTaskRecord(
            urlString: h.url("/g.bin"), state: .stopped, temporaryFileName: ".g.part", addedAt: EngineHarness.date)
        let result = h.engine.restore([checked, plain])
        #expect(result.restored == [plain.urlString])
        #expect(result.rejected.map(\.urlString) == [checked.urlString])
        #expect(result.rejected.first?.reason.contains("digests") == true)
    }

    @Test func theConfiguredDigestProviderHashesTheDownload() throws {
        let provider = CountingDigests()
        let h = try EngineHarness { $0.digests = provider }
        let body = h.serve("/f.bin", count: 300_000)
        let url = h.url("/f.bin")
        let checksum = "sha256=" + (try OpenSSLDigests().digest(.sha256, of: body.bytes(in: 0..<300_000))).hexString
        #expect(h.engine.download([DownloadItem(url, checksum: checksum)]).added == [url])
        h.runUntilIdle()
        #expect(h.engine.verificationResult(ofTask: url) == .verified)
        #expect(provider.hashedBytes.withLock { $0 } == 300_000, "every byte went through the provider")
    }

    @Test func aRecordWithoutTheVerificationFieldsStillDecodes() throws {
        let record = DownloadTaskRecord(
            urlString: "http://mock.test/a", state: .finished, temporaryFileName: ".p", checksum: "sha256=00",
            addedAt: EngineHarness.date, verification: .verified, checksumURL: "http://mock.test/SUMS",
            verificationRetry: .never)
        let data = try JSONEncoder().encode(record)
        #expect(try JSONDecoder().decode(DownloadTaskRecord.self, from: data) == record)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["verification"] = nil
        object["checksumURL"] = nil
        object["verificationRetry"] = nil
        let old = try JSONDecoder().decode(
            DownloadTaskRecord.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(old.verification == .unverified)
        #expect(old.checksumURL == nil)
        #expect(old.checksum == "sha256=00")
    }
}

/// OpenSSL's digests, counting the bytes they hash.
final class CountingDigests: DigestProvider {
    let hashedBytes = Locked(0)

    func makeDigest(_ algorithm: DigestAlgorithm) throws(VerificationError) -> any IncrementalDigest {
        Counting(inner: try OpenSSLDigests().makeDigest(algorithm), owner: self)
    }

    final class Counting: IncrementalDigest {
        let inner: any IncrementalDigest
        let owner: CountingDigests

        init(inner: any IncrementalDigest, owner: CountingDigests) {
            self.inner = inner
            self.owner = owner
        }

        func update(_ bytes: UnsafeRawBufferPointer) {
            owner.hashedBytes.withLock { $0 += bytes.count }
            inner.update(bytes)
        }

        func finalize() -> [UInt8] { inner.finalize() }
    }
}
