import Foundation
import Peregrine
import PeregrineMockTransport
import Testing

/// The manager's configuration is the engine's and the list's, composed: what is set through
/// either reaches the part it belongs to, and what the parts share is the manager's.
@Suite struct DownloadManagerConfigurationTests {
    @Test func membersOfThePartsReachTheParts() throws {
        var configuration = DownloadManager.Configuration()
        configuration.maxDownloadCount = 2
        configuration.hiddenFileExtension = false
        configuration.isTrashOpened = true
        #expect(configuration.engine.maxDownloadCount == 2)
        #expect(!configuration.engine.hiddenFileExtension)
        #expect(configuration.list.isTrashOpened)
        #expect(configuration.retryPolicy != nil, "a manager retries by default, an engine alone does not")

        let h = try ManagerHarness { $0 = Self.rebuilt($0, from: configuration) }
        #expect(h.manager.maxDownloadCount == 2)
        #expect(!h.manager.hiddenFileExtension)
        #expect(h.manager.isTrashOpened)
    }

    @Test func theManagerGivesThePartsWhatItOwns() async throws {
        let manual = try ManagerHarness(manualMode: false) { $0.list.manualMode = true }
        #expect(manual.manager.sortType == .manual)

        let h = try ManagerHarness { configuration in
            // An engine configuration of its own: another directory, no digests.
            let clock = configuration.clock
            configuration.engine = DownloadEngine.Configuration(directory: "/nonexistent/elsewhere")
            configuration.clock = clock
        }
        #expect(h.manager.downloadDirectory == h.scratch.path("downloads"))
        // Checksums are still checked: the manager gives its engine digests.
        let body = h.serve("/checked.bin", count: 4096)
        let digest = try StreamingHasher.digest(.sha256, of: body.bytes(in: 0..<4096))
        let url = h.url("/checked.bin")
        try h.manager.download([DownloadItem(url, checksum: "sha256=\(digest.hexString)")])
        h.runUntilIdle()
        #expect(h.state(url) == .finished)
        #expect(h.manager.verificationResult(ofTask: url) == .verified)
    }

    /// `configuration`'s engine and list members on the harness's configuration, whose
    /// directories, transport, store and clocks stay the harness's.
    private static func rebuilt(
        _ harness: DownloadManager.Configuration, from configuration: DownloadManager.Configuration
    ) -> DownloadManager.Configuration {
        var result = harness
        let clock = harness.clock
        let listClock = harness.listClock
        result.engine = configuration.engine
        result.list = configuration.list
        result.clock = clock
        result.listClock = listClock
        return result
    }
}
