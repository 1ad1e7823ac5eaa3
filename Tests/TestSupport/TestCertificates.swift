import Foundation

/// A throw-away certificate authority and a server certificate it signed, made with the
/// `openssl` command line for one test.
///
/// The server certificate is valid for `127.0.0.1` and `localhost` (subjectAltName
/// `IP:127.0.0.1, DNS:localhost`) for two days. ``unrelatedKeyPath`` is a key that no
/// certificate uses, for a pin that must not match. Keys are EC P-256, which `openssl` makes
/// in milliseconds.
///
/// ```swift
/// let certificates = try await TestCertificates.generate()
/// defer { certificates.remove() }
/// let server = try NginxServer(.init(tls: certificates.serverListener))
/// ```
public struct TestCertificates: Sendable {
    /// The directory holding every file, removed by ``remove()``.
    public let directory: TemporaryDirectory
    /// The CA's self-signed certificate (PEM): the file to trust.
    public let caCertificatePath: String
    /// The CA's private key (PEM).
    public let caKeyPath: String
    /// The server's certificate (PEM), signed by the CA.
    public let serverCertificatePath: String
    /// The server's private key (PEM).
    public let serverKeyPath: String
    /// A private key (PEM) unrelated to any certificate.
    public let unrelatedKeyPath: String
    /// The base64 SHA-256 of the server key's SubjectPublicKeyInfo: the pin that matches.
    public let serverKeyPin: String
    /// The base64 SHA-256 of the unrelated key's SubjectPublicKeyInfo: a pin that never matches.
    public let unrelatedKeyPin: String

    /// The Debian package that provides the `openssl` command.
    public static let debianPackage = "openssl"

    /// The server certificate and key, as an nginx TLS listener.
    public var serverListener: NginxServer.TLSListener {
        NginxServer.TLSListener(certificatePath: serverCertificatePath, privateKeyPath: serverKeyPath)
    }

    /// Makes a CA, a server key and certificate signed by it, an unrelated key, and the pins.
    ///
    /// - Throws: ``ChildProcessError`` when `openssl` is missing (naming its Debian package) or
    ///   fails, with its standard error; ``TemporaryDirectory/CreationError`` or a file error
    ///   when the files cannot be written. Nothing is left behind when this throws.
    public static func generate() async throws -> TestCertificates {
        let openssl = try ChildProcess.executable(named: "openssl", debianPackage: debianPackage)
        let directory = try TemporaryDirectory(prefix: "peregrine-certificates")
        do {
            let caKey = directory.path("ca.key")
            let caCertificate = directory.path("ca.pem")
            let serverKey = directory.path("server.key")
            let serverRequest = directory.path("server.csr")
            let serverCertificate = directory.path("server.pem")
            let serverExtensions = directory.path("server.ext")
            let unrelatedKey = directory.path("unrelated.key")

            for key in [caKey, serverKey, unrelatedKey] {
                try await ChildProcess.run(
                    openssl,
                    ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key]
                )
            }
            try await ChildProcess.run(
                openssl,
                [
                    "req", "-x509", "-new", "-key", caKey, "-out", caCertificate, "-days", "2", "-sha256",
                    "-subj", "/O=Peregrine tests/CN=Peregrine Test CA",
                    "-addext", "basicConstraints=critical,CA:TRUE",
                    "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                    "-addext", "subjectKeyIdentifier=hash",
                ]
            )
            try await ChildProcess.run(
                openssl,
                ["req", "-new", "-key", serverKey, "-out", serverRequest, "-subj", "/O=Peregrine tests/CN=127.0.0.1"]
            )
            try """
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature, keyEncipherment
            extendedKeyUsage = serverAuth
            subjectAltName = IP:127.0.0.1, DNS:localhost
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            """.write(toFile: serverExtensions, atomically: true, encoding: .utf8)
            try await ChildProcess.run(
                openssl,
                [
                    "x509", "-req", "-in", serverRequest, "-CA", caCertificate, "-CAkey", caKey,
                    "-set_serial", String(UInt64.random(in: 1...UInt64(Int64.max))),
                    "-days", "2", "-sha256", "-extfile", serverExtensions, "-out", serverCertificate,
                ]
            )
            return TestCertificates(
                directory: directory,
                caCertificatePath: caCertificate,
                caKeyPath: caKey,
                serverCertificatePath: serverCertificate,
                serverKeyPath: serverKey,
                unrelatedKeyPath: unrelatedKey,
                serverKeyPin: try await publicKeyPin(ofKeyAt: serverKey, openssl: openssl),
                unrelatedKeyPin: try await publicKeyPin(ofKeyAt: unrelatedKey, openssl: openssl)
            )
        } catch {
            directory.remove()
            throw error
        }
    }

    /// The base64 SHA-256 of a key's DER SubjectPublicKeyInfo, as libcurl's
    /// `CURLOPT_PINNEDPUBLICKEY` and ``PeregrineTransport/TrustPolicy`` take it: the same as
    /// `openssl pkey -pubout -outform der | openssl dgst -sha256 -binary | base64`.
    ///
    /// - Parameter path: a PEM private or public key.
    public static func publicKeyPin(ofKeyAt path: String) async throws -> String {
        try await publicKeyPin(
            ofKeyAt: path, openssl: ChildProcess.executable(named: "openssl", debianPackage: debianPackage))
    }

    private static func publicKeyPin(ofKeyAt path: String, openssl: String) async throws -> String {
        let publicKey = try await ChildProcess.run(openssl, ["pkey", "-in", path, "-pubout", "-outform", "DER"])
        let digest = try await ChildProcess.run(
            openssl, ["dgst", "-sha256", "-binary"], input: publicKey.standardOutput)
        guard digest.standardOutput.count == 32 else {
            throw ChildProcessError(
                command: "openssl dgst -sha256 -binary",
                message: "printed \(digest.standardOutput.count) bytes instead of a 32-byte digest"
            )
        }
        return digest.standardOutput.base64EncodedString()
    }

    /// Removes every generated file.
    public func remove() { directory.remove() }
}
