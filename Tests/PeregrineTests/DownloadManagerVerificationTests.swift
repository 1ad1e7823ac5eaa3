import Foundation
import Peregrine
import Testing

@Suite struct DownloadManagerVerificationTests {
    @Test func checksumsAreVerifiedAndSaved() async throws {
        let h = try ManagerHarness()
        let body = h.serve("/checked.bin", count: 300_000)
        let bytes = body.bytes(in: 0..<300_000)
        let digest = try StreamingHasher.digest(.sha256, of: bytes)
        let good = h.url("/checked.bin")
        try h.manager.download([DownloadItem(good, checksum: "sha256=\(digest.hexString)")])
        h.runUntilIdle()
        #expect(h.state(good) == .finished)
        #expect(h.manager.verificationResult(ofTask: good) == .verified)
        #expect(h.snapshot.tasks.first { $0.urlString == good }?.verification?.status == "verified")
        let again = await h.manager.verifyTasks([good])
        #expect(try again[good]?.get() == .verified)

        h.serve("/other.bin", count: 1000)
        let bad = h.url("/other.bin")
        try h.manager.download([DownloadItem(bad, checksum: "sha256=\(digest.hexString)")])
        h.runUntilIdle()
        guard case .failed(let reason) = h.state(bad) else {
            Issue.record("a mismatch did not fail: \(h.state(bad))")
            return
        }
        #expect(reason.code == .verification)
        #expect(h.snapshot.tasks.first { $0.urlString == bad }?.verification?.status == "mismatch")

        let second = try ManagerHarness(snapshot: h.snapshot, scratch: h.scratch, server: h.server)
        #expect(second.manager.verificationResult(ofTask: good) == .verified)
        guard case .mismatch = second.manager.verificationResult(ofTask: bad) else {
            Issue.record("the mismatch was not restored")
            return
        }
    }
}
