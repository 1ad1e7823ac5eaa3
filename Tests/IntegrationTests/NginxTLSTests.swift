import Foundation
import PeregrineCore
import PeregrineCurlTransport
import PeregrineEngine
import PeregrineTransport
import TestSupport
import Testing

/// TLS against nginx with a CA and a server certificate generated for the test: trust
/// policies, public-key pins, and redirects from https to plain http.
@Suite("CurlTransport checks nginx's certificate")
struct NginxTLSTests {
    /// A running nginx with a TLS listener, the certificates it uses and a served file.
    struct Fixture {
        var certificates: TestCertificates
        var server: NginxServer
        var servedDigest: String
        var downloads: TemporaryDirectory

        static func start(extraDirectives: [String] = []) async throws -> Fixture {
            let certificates = try await TestCertificates.generate()
            let server: NginxServer
            do {
                server = try NginxServer(.init(tls: certificates.serverListener, extraDirectives: extraDirectives))
            } catch {
                certificates.remove()
                throw error
            }
            do {
                try await server.start()
                let digest = try RandomFile.write(size: 4 << 20, to: server.documentPath("/file.bin"))
                return Fixture(
                    certificates: certificates, server: server, servedDigest: digest,
                    downloads: try TemporaryDirectory(prefix: "peregrine-downloads"))
            } catch {
                server.stop()
                certificates.remove()
                throw error
            }
        }

        func stop() {
            server.stop()
            certificates.remove()
            downloads.remove()
        }

        /// A request for the served file over TLS under `trust`.
        func request(_ trust: TrustPolicy, path: String = "/file.bin") throws -> TransferRequest {
            TransferRequest(url: try DownloadURL(server.httpsURL(path)), trust: trust)
        }
    }

    @Test func systemTrustRejectsTheTestCA() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let sink = CountingSink(MemorySink())

        let record = try await TransferMonitor.run(try fixture.request(.system), on: transport, sink: sink)

        #expect(record.error?.code == .tls, "got \(record.result)")
        #expect(record.heads.isEmpty)
        #expect(sink.byteCount == 0)
    }

    @Test func customCAAcceptsTheServerAndTheBytesArriveIntact() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let path = fixture.downloads.path("file.bin")
        let sink = try FileSink(path: path)

        let record = try await TransferMonitor.run(
            try fixture.request(.customCA(path: fixture.certificates.caCertificatePath)), on: transport, sink: sink)
        try sink.close()

        let summary = try #require(record.summary, "the TLS download failed: \(String(describing: record.error))")
        #expect(summary.head.status == 200)
        #expect(try FileDigest.sha256(ofFileAt: path) == fixture.servedDigest)
    }

    @Test func matchingPinWithTheCustomCAIsAccepted() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let path = fixture.downloads.path("file.bin")
        let sink = try FileSink(path: path)
        let trust = TrustPolicy.pinnedPublicKeys(
            [fixture.certificates.serverKeyPin], authorities: .file(path: fixture.certificates.caCertificatePath))

        let record = try await TransferMonitor.run(try fixture.request(trust), on: transport, sink: sink)
        try sink.close()

        let summary = try #require(record.summary, "the pinned download failed: \(String(describing: record.error))")
        #expect(summary.head.status == 200)
        #expect(try FileDigest.sha256(ofFileAt: path) == fixture.servedDigest)
    }

    @Test func pinOfAnotherKeyIsRejected() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let sink = CountingSink(MemorySink())
        let trust = TrustPolicy.pinnedPublicKeys(
            [fixture.certificates.unrelatedKeyPin], authorities: .file(path: fixture.certificates.caCertificatePath))

        let record = try await TransferMonitor.run(try fixture.request(trust), on: transport, sink: sink)

        #expect(record.error?.code == .tls, "got \(record.result)")
        #expect(record.heads.isEmpty)
        #expect(sink.byteCount == 0)
    }

    /// `/to-plain` on the TLS listener redirects to the same file on the plain http listener.
    static let downgrade = [
        "location = /to-plain { return 302 \(NginxServer.httpOriginVariable)/file.bin; }"
    ]

    @Test func redirectFromHTTPSToHTTPIsRefusedByDefault() async throws {
        let fixture = try await Fixture.start(extraDirectives: Self.downgrade)
        defer { fixture.stop() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let sink = CountingSink(MemorySink())

        let record = try await TransferMonitor.run(
            try fixture.request(.customCA(path: fixture.certificates.caCertificatePath), path: "/to-plain"),
            on: transport,
            sink: sink
        )

        #expect(record.error?.code == .insecureRedirect, "got \(record.result)")
        #expect(record.completionCount == 1)
        #expect(sink.byteCount == 0)
    }

    @Test func redirectFromHTTPSToHTTPIsFollowedWhenThePolicyAllowsIt() async throws {
        let fixture = try await Fixture.start(extraDirectives: Self.downgrade)
        defer { fixture.stop() }
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let path = fixture.downloads.path("file.bin")
        let sink = try FileSink(path: path)
        var request = try fixture.request(
            .customCA(path: fixture.certificates.caCertificatePath), path: "/to-plain")
        request.redirects = RedirectPolicy(allowsHTTPSToHTTP: true)

        let record = try await TransferMonitor.run(request, on: transport, sink: sink)
        try sink.close()

        let summary = try #require(record.summary, "the allowed downgrade failed: \(String(describing: record.error))")
        #expect(
            record.redirects == [
                Redirect(
                    status: 302, from: fixture.server.httpsURL("/to-plain"), to: fixture.server.httpURL("/file.bin"))
            ]
        )
        #expect(summary.head.effectiveURL == fixture.server.httpURL("/file.bin"))
        #expect(try FileDigest.sha256(ofFileAt: path) == fixture.servedDigest)
    }
}
