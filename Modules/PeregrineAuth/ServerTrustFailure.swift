import PeregrineTransport

/// Which certificate check failed, read from a transport's TLS error, with advice.
///
/// libcurl reports every TLS failure as `TransportError.Code.tls` with its
/// own message ("SSL certificate problem: certificate has expired", "SSL: no alternative
/// certificate subject name matches target host name …"); this names the check, so a user is
/// told "the certificate expired" rather than "TLS failure".
public struct ServerTrustFailure: Sendable, Hashable, CustomStringConvertible {
    /// A certificate check.
    public struct Check: Sendable, Hashable, CustomStringConvertible {
        /// A stable short name.
        public let name: String
        /// What the user can do about it.
        public let advice: String
        init(_ name: String, advice: String) {
            self.name = name
            self.advice = advice
        }
        public var description: String { name }

        /// The certificate's validity period has ended.
        public static let expired = Check(
            "certificate expired", advice: "the server must renew its certificate; check this machine's clock")
        /// The certificate's validity period has not begun.
        public static let notYetValid = Check(
            "certificate not yet valid", advice: "check this machine's clock")
        /// The certificate was issued for another host name or address.
        public static let hostMismatch = Check(
            "certificate for another host",
            advice: "the certificate does not name the host in the URL; use the name it was issued for")
        /// The certificate signs itself and is not trusted.
        public static let selfSigned = Check(
            "self-signed certificate",
            advice: "trust it with a custom CA bundle or pin its public key for this host")
        /// The issuer is not among the trusted CAs.
        public static let untrustedIssuer = Check(
            "certificate from an untrusted issuer",
            advice: "add the issuing CA with a custom CA bundle for this host")
        /// The public key matches none of the pins.
        public static let pinMismatch = Check(
            "public key does not match the pins",
            advice:
                "the server's key changed, or a machine in between answers; update the pins only if the new key is genuine"
        )
        /// The CA bundle could not be read.
        public static let unreadableCABundle = Check(
            "CA bundle unreadable", advice: "check the path and format (PEM) of the CA bundle")
        /// The certificate was revoked.
        public static let revoked = Check("certificate revoked", advice: "the server must get a new certificate")
        /// Another TLS failure (handshake, protocol version, cipher).
        public static let other = Check("TLS failure", advice: "see the transport's message")
    }

    /// The check that failed.
    public var check: Check
    /// The transport's own message.
    public var detail: String

    /// Classifies a transport error; nil when it is not a TLS failure.
    public init?(_ error: TransportError) {
        guard error.code == .tls else { return nil }
        self.init(message: error.message)
    }

    /// Classifies a TLS failure message (libcurl with OpenSSL, or similar wording).
    public init(message: String) {
        detail = message
        let text = message.lowercased()
        func has(_ part: String) -> Bool { text.contains(part) }
        if has("certificate has expired") || has("certificate expired") {
            check = .expired
        } else if has("not yet valid") {
            check = .notYetValid
        } else if has("pinned public key") || has("pinnedpubkey") {
            check = .pinMismatch
        } else if has("subject name") || has("does not match target host") || has("hostname mismatch")
            || has("no alternative certificate subject name")
        {
            check = .hostMismatch
        } else if has("self-signed certificate") || has("self signed certificate") {
            check = .selfSigned
        } else if has("unable to get local issuer") || has("unable to get issuer") || has("unknown ca")
            || has("certificate chain") || has("unable to verify the first certificate")
        {
            check = .untrustedIssuer
        } else if has("certificate verify locations") || has("cafile") || has("certificate file") {
            check = .unreadableCABundle
        } else if has("revoked") {
            check = .revoked
        } else {
            check = .other
        }
    }

    public var description: String { "\(check): \(advice) (\(detail))" }

    /// What the user can do.
    public var advice: String { check.advice }
}
