import PeregrineAuth
import PeregrineTransport
import Testing

@Suite("Naming the failed certificate check")
struct ServerTrustFailureTests {
    @Test(
        "libcurl's messages name the check",
        arguments: [
            ("SSL certificate problem: certificate has expired (libcurl error 60)", ServerTrustFailure.Check.expired),
            ("SSL certificate problem: certificate is not yet valid", .notYetValid),
            ("SSL: no alternative certificate subject name matches target host name '127.0.0.1'", .hostMismatch),
            ("SSL: certificate subject name 'a' does not match target host name 'b'", .hostMismatch),
            ("SSL certificate problem: self-signed certificate", .selfSigned),
            ("SSL certificate problem: self signed certificate in certificate chain", .selfSigned),
            ("SSL certificate problem: unable to get local issuer certificate", .untrustedIssuer),
            ("SSL: public key does not match pinned public key", .pinMismatch),
            ("error setting certificate verify locations: CAfile: /nope", .unreadableCABundle),
            ("OpenSSL SSL_connect: SSL_ERROR_SYSCALL", .other),
        ])
    func messageNamesTheCheck(message: String, check: ServerTrustFailure.Check) {
        #expect(ServerTrustFailure(message: message).check == check)
    }

    @Test func onlyTLSErrorsAreClassified() {
        #expect(ServerTrustFailure(TransportError(.connect, "connection refused")) == nil)
        let failure = ServerTrustFailure(TransportError(.tls, "SSL certificate problem: certificate has expired"))
        #expect(failure?.check == .expired)
        #expect(failure?.description.contains("renew") == true)
    }
}
