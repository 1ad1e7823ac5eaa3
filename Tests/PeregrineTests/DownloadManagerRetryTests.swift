import Foundation
import Peregrine
import PeregrineMockTransport
import Testing

/// The facade retries transient failures by default (`BackoffRetryPolicy.standard`), on the
/// engine's clock — here the mock transport's, so the waits take no real time.
@Suite struct DownloadManagerRetryTests {
    @Test func aDroppedConnectionIsRetriedByDefaultAndResumesWithRange() async throws {
        let h = try ManagerHarness()
        let body = MockBody.generated(seed: 4, count: 200_000)
        h.server.setRoutes(
            [
                MockRoute.file(body, entityTag: .fixed("\"d\"")).faulting(.dropAfter(bytes: 80_000)),
                .file(body, entityTag: .fixed("\"d\"")),
            ], for: "/drop.bin")
        let url = h.url("/drop.bin")
        try h.manager.download([url])
        h.runUntilIdle()
        #expect(h.state(url) == .finished)
        let requests = h.server.requests(for: "/drop.bin")
        #expect(requests.count == 2)
        #expect(requests.last?.headers["Range"] == "bytes=80000-")
        let path = try #require(h.manager.filePath(ofTask: url))
        #expect(FileManager.default.contents(atPath: path).map { [UInt8]($0) } == body.allBytes)
        await h.recorder.waitForTask(url) { if case .retrying = $0 { true } else { false } }
    }

    @Test func retryingCanBeTurnedOff() throws {
        let h = try ManagerHarness { $0.retryPolicy = nil }
        h.server.setRoutes([.status(503), .status(200)], for: "/busy")
        let url = h.url("/busy")
        try h.manager.download([url])
        h.runUntilIdle()
        #expect(h.state(url).isFailed)
        #expect(h.server.requests(for: "/busy").count == 1)
    }
}
