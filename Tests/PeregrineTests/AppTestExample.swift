import Foundation
import PeregrineTestKit
import Testing

// An app's tests on PeregrineTestKit. Docs/GettingStarted.md shows this file as it is
// ("Test your app"; Scripts/doc-snippets.py keeps the two the same), and it runs with the suite.

@Suite struct AppTestExample {
    @Test func aDownloadLandsAndIsStillThereAfterARestart() async throws {
        let bed = try ManagerTestBed()
        defer { bed.remove() }
        let body = bed.serve("/report.pdf", count: 200_000)

        let handle = try bed.manager.download(bed.url("/report.pdf"))
        bed.runUntilIdle()  // the transfer runs here, on the virtual clock
        let file = try await handle.value
        #expect(try Data(contentsOf: file) == Data(body.allBytes))
        #expect(bed.manager.fileType(ofTask: bed.url("/report.pdf")) == "Document")

        // The app's next run finds the file in its store and fetches nothing.
        let requests = bed.server.requests.count
        let next = try bed.restarted()
        let again = try await next.manager.download(bed.url("/report.pdf")).value
        #expect(again == file)
        #expect(bed.server.requests.count == requests)
    }

    @Test func aDroppedConnectionIsRetriedAndTheDownloadContinues() async throws {
        let bed = try ManagerTestBed()
        defer { bed.remove() }
        let body = MockBody.generated(seed: 3, count: 500_000)
        // The first answer breaks after 100,000 bytes; the retry gets the rest with a Range.
        bed.server.setRoutes(
            [
                .file(body, entityTag: .fixed("\"r\"")).faulting(.dropAfter(bytes: 100_000)),
                .file(body, entityTag: .fixed("\"r\"")),
            ], for: "/big.iso")

        try bed.manager.download(bed.url("/big.iso"))
        bed.advance(by: .seconds(60))  // past the retry policy's backoff
        let end = try await bed.waitForEnd(of: bed.url("/big.iso"))
        guard case .finished(_, let file) = end else {
            Issue.record("the download did not finish: \(end)")
            return
        }
        #expect(try Data(contentsOf: file) == Data(body.allBytes))
        #expect(bed.server.requests.last?.headers["Range"] == "bytes=100000-")
    }
}
