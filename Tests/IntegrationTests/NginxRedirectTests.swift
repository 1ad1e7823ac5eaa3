import Foundation
import PeregrineCore
import PeregrineCurlTransport
import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

/// Redirect chains served by nginx, followed by CurlTransport under a ``RedirectPolicy``.
@Suite("CurlTransport follows nginx redirects")
struct NginxRedirectTests {
    /// `/r1` → `/r2` → `/r3` → `/file.bin`: three hops.
    static let chain = NginxServer.Configuration(extraDirectives: [
        "location = /r1 { return 302 /r2; }",
        "location = /r2 { return 302 /r3; }",
        "location = /r3 { return 302 /file.bin; }",
    ])

    @Test func threeHopChainSucceedsWithEachHopReportedInOrder() async throws {
        let server = try NginxServer(Self.chain)
        defer { server.stop() }
        try await server.start()
        let servedDigest = try RandomFile.write(size: 1 << 20, to: server.documentPath("/file.bin"))
        let downloads = try TemporaryDirectory(prefix: "peregrine-downloads")
        defer { downloads.remove() }
        let path = downloads.path("file.bin")
        let transport = CurlTransport()
        defer { transport.shutdown() }

        let sink = try FileSink(path: path)
        let record = try await TransferMonitor.run(
            try TransferRequest(url: server.httpURL("/r1")), on: transport, sink: sink)
        try sink.close()

        let summary = try #require(
            record.summary, "the redirected download failed: \(String(describing: record.error))")
        #expect(
            record.redirects == [
                Redirect(status: 302, from: server.httpURL("/r1"), to: server.httpURL("/r2")),
                Redirect(status: 302, from: server.httpURL("/r2"), to: server.httpURL("/r3")),
                Redirect(status: 302, from: server.httpURL("/r3"), to: server.httpURL("/file.bin")),
            ]
        )
        #expect(summary.redirectCount == 3)
        #expect(summary.head.status == 200)
        #expect(summary.head.effectiveURL == server.httpURL("/file.bin"))
        let lastRedirect = record.events.lastIndex { if case .redirected = $0 { true } else { false } }
        let head = record.events.firstIndex { if case .head = $0 { true } else { false } }
        #expect(lastRedirect != nil && head != nil && lastRedirect! < head!, "every hop comes before the head")
        #expect(try FileDigest.sha256(ofFileAt: path) == servedDigest)
    }

    @Test func chainLongerThanTheHopLimitFailsWithTooManyRedirects() async throws {
        let server = try NginxServer(Self.chain)
        defer { server.stop() }
        try await server.start()
        try RandomFile.write(size: 1 << 20, to: server.documentPath("/file.bin"))
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let sink = CountingSink(MemorySink())

        var request = try TransferRequest(url: server.httpURL("/r1"))
        request.redirects = RedirectPolicy(maxHops: 2)
        let record = try await TransferMonitor.run(request, on: transport, sink: sink)

        let error = try #require(record.error, "three hops under a limit of two must not succeed")
        #expect(error.code == .tooManyRedirects)
        #expect(record.redirects.map(\.to) == [server.httpURL("/r2"), server.httpURL("/r3")])
        #expect(record.completionCount == 1)
        #expect(sink.byteCount == 0)
    }
}
