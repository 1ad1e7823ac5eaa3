import PeregrineAuth
import PeregrineCore
import PeregrineCurlTransport
import PeregrineTransport
import PeregrineVerification
import Synchronization
import TestSupport
import Testing

/// The trust map against nginx with TLS and certificates made by `openssl` for the test:
/// the default rejects the test CA, a custom CA or a matching pin accepts, a wrong pin and bad
/// certificates are rejected with a message naming the failed check, and the insecure opt-out
/// accepts with a warning.
@Suite("Server trust against nginx")
struct ServerTrustNginxTests {
    /// nginx serving `/file.bin` over TLS with `listener`'s certificate.
    struct Fixture {
        let certificates: TestCertificates
        let bad: AuthTestCertificates
        let server: NginxServer
        let digest: String

        static func start(_ pick: (TestCertificates, AuthTestCertificates) -> NginxServer.TLSListener) async throws
            -> Fixture
        {
            let certificates = try await TestCertificates.generate()
            let bad: AuthTestCertificates
            do {
                bad = try await AuthTestCertificates.generate(signedBy: certificates)
            } catch {
                certificates.remove()
                throw error
            }
            do {
                let server = try NginxServer(.init(tls: pick(certificates, bad)))
                do {
                    try await server.start()
                    let digest = try writeRandomFile(size: 64 << 10, to: server.documentPath("/file.bin"))
                    return Fixture(certificates: certificates, bad: bad, server: server, digest: digest)
                } catch {
                    server.stop()
                    throw error
                }
            } catch {
                bad.remove()
                certificates.remove()
                throw error
            }
        }

        func stop() {
            server.stop()
            bad.remove()
            certificates.remove()
        }

        /// Downloads `/file.bin` over TLS with the trust `map` applied by the decorator.
        func download(with map: ServerTrustMap) async throws -> (Result<TransferSummary, TransportError>, String) {
            let curl = CurlTransport()
            defer { curl.shutdown() }
            let transport = AuthenticatingTransport(wrapping: curl, configuration: .init(serverTrust: map))
            let sink = MemorySink()
            let (result, _) = await transport.run(try TransferRequest(url: server.httpsURL("/file.bin")), sink: sink)
            return (result, try StreamingHasher.digest(.sha256, of: sink.bytes).hexString)
        }

        var caPath: String { certificates.caCertificatePath }
    }

    static func goodCertificate(_ good: TestCertificates, _ bad: AuthTestCertificates) -> NginxServer.TLSListener {
        good.serverListener
    }

    @Test func defaultSystemTrustRejectsTheTestCA() async throws {
        let fixture = try await Fixture.start(Self.goodCertificate)
        defer { fixture.stop() }

        let (result, _) = try await fixture.download(with: try ServerTrustMap())

        let error = try #require(result.error)
        #expect(error.failureReason.code == .tls)
        #expect(ServerTrustFailure(error)?.check == .untrustedIssuer, "\(error)")
    }

    @Test func customCAForTheHostAccepts() async throws {
        let fixture = try await Fixture.start(Self.goodCertificate)
        defer { fixture.stop() }

        let (result, digest) = try await fixture.download(
            with: try ServerTrustMap(evaluations: ["127.0.0.1": .customCA(bundlePath: fixture.caPath)]))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(digest == fixture.digest)
    }

    @Test func matchingPinAmongRotationPinsAccepts() async throws {
        let fixture = try await Fixture.start(Self.goodCertificate)
        defer { fixture.stop() }
        let pins = [fixture.certificates.unrelatedKeyPin, "sha256//" + fixture.certificates.serverKeyPin]

        let (result, digest) = try await fixture.download(
            with: try ServerTrustMap(evaluations: [
                "127.0.0.1": .pinnedPublicKeys(pins, authorities: .file(path: fixture.caPath))
            ]))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(digest == fixture.digest)
    }

    @Test func pinOfAnotherKeyIsRejectedAsAPinMismatch() async throws {
        let fixture = try await Fixture.start(Self.goodCertificate)
        defer { fixture.stop() }

        let (result, _) = try await fixture.download(
            with: try ServerTrustMap(evaluations: [
                "127.0.0.1": .pinnedPublicKeys(
                    [fixture.certificates.unrelatedKeyPin], authorities: .file(path: fixture.caPath))
            ]))

        let error = try #require(result.error)
        #expect(error.failureReason.code == .tls)
        #expect(ServerTrustFailure(error)?.check == .pinMismatch, "\(error)")
    }

    @Test func insecureOptOutAcceptsAndWarns() async throws {
        let fixture = try await Fixture.start { _, bad in bad.selfSignedListener }
        defer { fixture.stop() }
        let warnings = Locked<[ServerTrustWarning]>([])

        let (result, digest) = try await fixture.download(
            with: try ServerTrustMap(
                evaluations: ["127.0.0.1": .insecure],
                onWarning: { warning in warnings.withLock { $0.append(warning) } }))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(digest == fixture.digest)
        #expect(warnings.withLock { $0.map(\.host) } == ["127.0.0.1"])
    }

    @Test func expiredCertificateIsRejectedAsExpired() async throws {
        let fixture = try await Fixture.start { _, bad in bad.expiredListener }
        defer { fixture.stop() }

        let (result, _) = try await fixture.download(
            with: try ServerTrustMap(evaluations: ["127.0.0.1": .customCA(bundlePath: fixture.caPath)]))

        let error = try #require(result.error)
        #expect(error.code == .tls)
        #expect(error.message.contains("expired"), "\(error)")
        #expect(ServerTrustFailure(error)?.check == .expired, "\(error)")
    }

    @Test func certificateForAnotherHostIsRejectedAsAHostMismatch() async throws {
        let fixture = try await Fixture.start { _, bad in bad.otherHostListener }
        defer { fixture.stop() }

        let (result, _) = try await fixture.download(
            with: try ServerTrustMap(evaluations: ["127.0.0.1": .customCA(bundlePath: fixture.caPath)]))

        let error = try #require(result.error)
        #expect(error.code == .tls)
        #expect(error.message.contains("127.0.0.1"), "\(error)")
        #expect(ServerTrustFailure(error)?.check == .hostMismatch, "\(error)")
    }

    @Test func selfSignedCertificateIsRejectedAsSelfSigned() async throws {
        let fixture = try await Fixture.start { _, bad in bad.selfSignedListener }
        defer { fixture.stop() }

        let (result, _) = try await fixture.download(with: try ServerTrustMap())

        let error = try #require(result.error)
        #expect(error.code == .tls)
        #expect(error.message.contains("self-signed") || error.message.contains("self signed"), "\(error)")
        #expect(ServerTrustFailure(error)?.check == .selfSigned, "\(error)")
    }
}
