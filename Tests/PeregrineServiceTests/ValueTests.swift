import PeregrineCore
import PeregrineService
import TestSupport
import Testing

/// GIDs, status names and the secret.
@Suite struct ValueTests {
    @Test func gidsAreSixteenLowercaseHexDigits() {
        #expect(GID(0xAB).description == "00000000000000ab")
        #expect(GID(hex: "00000000000000AB") == GID(0xAB))
        #expect(GID(hex: "ab") == nil)
        #expect(GID(hex: "0000000000000zab") == nil)
        var random = SeededRandom(seed: 7)
        for _ in 0..<100 {
            let gid = GID.random(using: &random)
            #expect(gid.rawValue != 0)
            #expect(GID(hex: gid.description) == gid)
        }
    }

    @Test func peregrineStatesMapToAria2StatusNames() {
        func status(_ state: DownloadState, queued: Bool = false, paused: Bool = false, trash: Bool = false) -> String {
            DownloadStatus(state, isQueued: queued, pausedByClient: paused, inTrash: trash).rawValue
        }
        #expect(status(.downloading) == "active")
        #expect(status(.pending, queued: true) == "waiting")
        #expect(status(.pending, queued: true, paused: true) == "waiting")
        #expect(status(.pending) == "waiting")
        #expect(status(.pending, paused: true) == "paused")
        #expect(status(.stopped) == "paused")
        #expect(status(.paused) == "paused")
        #expect(status(.finished) == "complete")
        #expect(status(.failed(FailureReason(.network, message: "x"))) == "error")
        #expect(status(.finished, trash: true) == "removed")
    }

    @Test func theSecretMatchesOnlyItself() {
        let secret = SecretToken("s3cret")
        #expect(secret.matches("s3cret"))
        #expect(!secret.matches("s3cre"))
        #expect(!secret.matches("s3cretx"))
        #expect(!secret.matches("S3cret"))
        #expect(!secret.matches(""))
        #expect(!"\(secret)".contains("s3cret"))
        #expect(SecretToken("").matches(""))
    }
}
