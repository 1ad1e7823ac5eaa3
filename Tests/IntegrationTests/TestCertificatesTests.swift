import Foundation
import TestSupport
import Testing

/// The generated CA, server certificate and pins, checked with `openssl` and `curl`.
@Suite("TestCertificates")
struct TestCertificatesTests {
    @Test func serverCertificateIsSignedByTheCAFor127001AndLocalhost() async throws {
        let certificates = try await TestCertificates.generate()
        defer { certificates.remove() }
        let openssl = try ChildProcess.executable(named: "openssl", debianPackage: "openssl")

        let verified = try await ChildProcess.run(
            openssl, ["verify", "-CAfile", certificates.caCertificatePath, certificates.serverCertificatePath])
        let names = try await ChildProcess.run(
            openssl, ["x509", "-in", certificates.serverCertificatePath, "-noout", "-ext", "subjectAltName"])

        #expect(verified.text.hasSuffix("OK\n"))
        #expect(names.text.contains("IP Address:127.0.0.1"))
        #expect(names.text.contains("DNS:localhost"))
    }

    @Test func pinsAreBase64SHA256DigestsOfDifferentKeys() async throws {
        let certificates = try await TestCertificates.generate()
        defer { certificates.remove() }

        #expect(Data(base64Encoded: certificates.serverKeyPin)?.count == 32)
        #expect(Data(base64Encoded: certificates.unrelatedKeyPin)?.count == 32)
        #expect(certificates.serverKeyPin != certificates.unrelatedKeyPin)
        #expect(
            try await TestCertificates.publicKeyPin(ofKeyAt: certificates.serverKeyPath) == certificates.serverKeyPin)
    }

    @Test func curlAcceptsTheServerPinAndRejectsTheUnrelatedOne() async throws {
        let certificates = try await TestCertificates.generate()
        defer { certificates.remove() }
        let server = try NginxServer(.init(tls: certificates.serverListener))
        defer { server.stop() }
        try await server.start()
        try Data("pinned".utf8).write(to: URL(fileURLWithPath: server.documentPath("/pinned.txt")))
        let curl = try ChildProcess.executable(named: "curl", debianPackage: "curl")
        let url = server.httpsURL("/pinned.txt")
        let ca = certificates.caCertificatePath

        let untrusted = try await ChildProcess.run(curl, ["-sS", url], allowFailure: true)
        let trusted = try await ChildProcess.run(curl, ["-sS", "--cacert", ca, url])
        let pinned = try await ChildProcess.run(
            curl, ["-sS", "--cacert", ca, "--pinnedpubkey", "sha256//" + certificates.serverKeyPin, url])
        let wrongPin = try await ChildProcess.run(
            curl, ["-sS", "--cacert", ca, "--pinnedpubkey", "sha256//" + certificates.unrelatedKeyPin, url],
            allowFailure: true)

        #expect(untrusted.status == 60)  // CURLE_PEER_FAILED_VERIFICATION
        #expect(trusted.text == "pinned")
        #expect(pinned.text == "pinned")
        #expect(wrongPin.status == 90)  // CURLE_SSL_PINNEDPUBKEYNOTMATCH
    }
}
