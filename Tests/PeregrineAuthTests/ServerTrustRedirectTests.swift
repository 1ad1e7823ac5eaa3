import Foundation
import PeregrineAuth
import PeregrineCore
import PeregrineCurlTransport
import PeregrineTransport
import PeregrineVerification
import Synchronization
import TestSupport
import Testing

/// Pins after a redirect to another host, against two nginx servers with TLS: the first
/// (`127.0.0.1`) has the test set's server key, the second (`localhost`) another key, both
/// certified by the test CA. The first redirects `/moved` to the second's `/file.bin`.
@Suite("Server trust across a redirect to another host")
struct ServerTrustRedirectTests {
    struct Fixture {
        let certificates: TestCertificates
        let rotated: TemporaryDirectory
        let first: NginxServer
        let second: NginxServer
        let digest: String

        /// The URL that redirects to the other host.
        var movedURL: String { first.httpsURL("/moved") }
        var caPath: String { certificates.caCertificatePath }

        static func start() async throws -> Fixture {
            let certificates = try await TestCertificates.generate()
            var cleanup: [() -> Void] = [certificates.remove]
            do {
                let rotated = try TemporaryDirectory(prefix: "peregrine-rotated-certificate")
                cleanup.append(rotated.remove)
                let listener = try await rotatedListener(certificates, in: rotated)
                let second = try NginxServer(.init(tls: listener))
                try await second.start()
                cleanup.append(second.stop)
                let digest = try writeRandomFile(size: 64 << 10, to: second.documentPath("/file.bin"))
                let secondPort = try #require(second.httpsPort)
                let first = try NginxServer(
                    .init(
                        tls: certificates.serverListener,
                        extraDirectives: ["location = /moved { return 302 https://localhost:\(secondPort)/file.bin; }"]
                    ))
                try await first.start()
                return Fixture(
                    certificates: certificates, rotated: rotated, first: first, second: second, digest: digest)
            } catch {
                for step in cleanup.reversed() { step() }
                throw error
            }
        }

        /// A certificate for `IP:127.0.0.1, DNS:localhost` from the test CA, on the set's
        /// unrelated key: valid in every respect, but not the pinned key.
        static func rotatedListener(
            _ certificates: TestCertificates, in directory: TemporaryDirectory
        ) async throws -> NginxServer.TLSListener {
            let openssl = try ChildProcess.executable(named: "openssl", debianPackage: TestCertificates.debianPackage)
            let request = directory.path("rotated.csr")
            let extensions = directory.path("rotated.ext")
            let certificate = directory.path("rotated.pem")
            try await ChildProcess.run(
                openssl,
                [
                    "req", "-new", "-key", certificates.unrelatedKeyPath, "-out", request, "-subj",
                    "/O=Peregrine tests/CN=localhost",
                ])
            try """
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature, keyEncipherment
            extendedKeyUsage = serverAuth
            subjectAltName = IP:127.0.0.1, DNS:localhost

            """.write(toFile: extensions, atomically: true, encoding: .utf8)
            try await ChildProcess.run(
                openssl,
                [
                    "x509", "-req", "-in", request, "-CA", certificates.caCertificatePath, "-CAkey",
                    certificates.caKeyPath, "-set_serial", String(UInt64.random(in: 1...UInt64(Int64.max))), "-days",
                    "2", "-sha256", "-extfile", extensions, "-out", certificate,
                ])
            return NginxServer.TLSListener(certificatePath: certificate, privateKeyPath: certificates.unrelatedKeyPath)
        }

        func stop() {
            first.stop()
            second.stop()
            rotated.remove()
            certificates.remove()
        }

        /// Fetches `/moved` with the trust `map` applied by the decorator.
        func download(with map: ServerTrustMap) async throws -> (
            Result<TransferSummary, TransportError>, EventLog, String
        ) {
            let curl = CurlTransport()
            defer { curl.shutdown() }
            let transport = AuthenticatingTransport(wrapping: curl, configuration: .init(serverTrust: map))
            let sink = MemorySink()
            let (result, log) = await transport.run(try TransferRequest(url: movedURL), sink: sink)
            return (result, log, try StreamingHasher.digest(.sha256, of: sink.bytes).hexString)
        }
    }

    static func redirects(in log: EventLog) -> [Redirect] {
        log.events.compactMap { event in
            if case .redirected(let redirect) = event { redirect } else { nil }
        }
    }

    @Test func pinOfTheFirstHostIsCheckedAgainAtTheRedirectTarget() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }

        let (result, log, _) = try await fixture.download(
            with: try ServerTrustMap(evaluations: [
                "127.0.0.1": .pinnedPublicKeys(
                    [fixture.certificates.serverKeyPin], authorities: .file(path: fixture.caPath)),
                // The target's own entry pins the same key, so the result is the same whether a
                // transport applies the first host's policy to every hop or each host's own.
                "localhost": .pinnedPublicKeys(
                    [fixture.certificates.serverKeyPin], authorities: .file(path: fixture.caPath)),
            ]))

        // The first hop passed the pin (it answered the redirect); the second host's key failed it.
        #expect(Self.redirects(in: log).count == 1, "\(log.events)")
        let error = try #require(result.error)
        #expect(error.code == .tls)
        #expect(ServerTrustFailure(error)?.check == .pinMismatch, "\(error)")
    }

    @Test func rotationPinsAcceptBothKeysAcrossTheRedirect() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }

        // Both hosts take both keys: the one in use now and the next.
        let pins = ServerTrustEvaluation.pinnedPublicKeys(
            [fixture.certificates.serverKeyPin, fixture.certificates.unrelatedKeyPin],
            authorities: .file(path: fixture.caPath))
        let (result, log, digest) = try await fixture.download(
            with: try ServerTrustMap(evaluations: ["127.0.0.1": pins, "localhost": pins]))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(result.summary?.redirectCount == 1)
        #expect(Self.redirects(in: log).count == 1)
        #expect(digest == fixture.digest)
    }

    /// The first host's `insecure` opt-out switches checks off there only: the redirect target,
    /// which has no entry, is checked under the system's CAs.
    @Test func insecureOptOutDoesNotExtendToTheRedirectTarget() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }

        let (result, log, _) = try await fixture.download(
            with: try ServerTrustMap(evaluations: ["127.0.0.1": .insecure]))

        // The first hop answered the redirect without checks; localhost's certificate, from the
        // test CA that the system does not know, failed them.
        #expect(Self.redirects(in: log).count == 1, "\(log.events)")
        let error = try #require(result.error)
        #expect(ServerTrustFailure(error)?.check == .untrustedIssuer, "\(error)")
    }

    /// The first host's CA file is not carried to the redirect target: without an entry of its own,
    /// localhost is checked under the system's CAs again.
    @Test func customCAOfTheFirstHostDoesNotExtendToTheRedirectTarget() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }

        let (result, log, _) = try await fixture.download(
            with: try ServerTrustMap(evaluations: ["127.0.0.1": .customCA(bundlePath: fixture.caPath)]))

        #expect(Self.redirects(in: log).count == 1, "\(log.events)")
        let error = try #require(result.error)
        #expect(ServerTrustFailure(error)?.check == .untrustedIssuer, "\(error)")
    }

    /// Each host is held to its own pin: the first host's key is not acceptable at the target and
    /// the target's key not at the first host, so only per-host policies let the download through.
    @Test func redirectTargetIsCheckedAgainstItsOwnPins() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }

        let (result, log, digest) = try await fixture.download(
            with: try ServerTrustMap(evaluations: [
                "127.0.0.1": .pinnedPublicKeys(
                    [fixture.certificates.serverKeyPin], authorities: .file(path: fixture.caPath)),
                "localhost": .pinnedPublicKeys(
                    [fixture.certificates.unrelatedKeyPin], authorities: .file(path: fixture.caPath)),
            ]))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(Self.redirects(in: log).count == 1, "\(log.events)")
        #expect(digest == fixture.digest)
    }

    /// The first host's pin is dropped at a target whose policy has none: localhost's key differs
    /// from the pinned one, and its certificate is still checked against the test CA.
    @Test func pinOfTheFirstHostIsNotRequiredAtATargetWithoutPins() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }

        let (result, log, digest) = try await fixture.download(
            with: try ServerTrustMap(evaluations: [
                "127.0.0.1": .pinnedPublicKeys(
                    [fixture.certificates.serverKeyPin], authorities: .file(path: fixture.caPath)),
                "localhost": .customCA(bundlePath: fixture.caPath),
            ]))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(Self.redirects(in: log).count == 1, "\(log.events)")
        #expect(digest == fixture.digest)
    }

    /// An insecure redirect target is reported to the map's warning callback when the transport
    /// reaches it, naming the target rather than the first host.
    @Test func insecureRedirectTargetIsReportedWhenItIsReached() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.stop() }
        let warnings = Locked<[ServerTrustWarning]>([])

        let (result, _, digest) = try await fixture.download(
            with: try ServerTrustMap(
                evaluations: [
                    "127.0.0.1": .customCA(bundlePath: fixture.caPath), "localhost": .insecure,
                ],
                onWarning: { warning in warnings.withLock { $0.append(warning) } }
            ))

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))")
        #expect(digest == fixture.digest)
        #expect(warnings.withLock { $0.map(\.host) } == ["localhost"])
    }
}
