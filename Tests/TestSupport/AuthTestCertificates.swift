import Foundation

/// Bad server certificates for the trust tests, made with the `openssl` command line: one that
/// expired, one for another host, and a self-signed one.
///
/// The expired and other-host certificates are signed by the CA of a ``TestCertificates``, so
/// that with that CA trusted exactly one check fails for each: the validity period, or the
/// host name. All three use that set's server key, so its pins match them. The expired
/// certificate is valid from 2020-01-01 to 2020-01-02 (made with `openssl ca -startdate
/// -enddate`, since `openssl x509` in OpenSSL 3.0 cannot date a certificate in the past).
///
/// ```swift
/// let certificates = try await TestCertificates.generate()
/// let bad = try await AuthTestCertificates.generate(signedBy: certificates)
/// defer { bad.remove(); certificates.remove() }
/// let server = try NginxServer(.init(tls: bad.expiredListener))
/// ```
public struct AuthTestCertificates: Sendable {
    /// The directory holding every file, removed by ``remove()``.
    public let directory: TemporaryDirectory
    /// The key of every certificate here: the CA set's server key.
    public let keyPath: String
    /// Signed by the CA, for `IP:127.0.0.1, DNS:localhost`, valid 2020-01-01 to 2020-01-02.
    public let expiredCertificatePath: String
    /// Signed by the CA, currently valid, for `DNS:other.example` only.
    public let otherHostCertificatePath: String
    /// Signed by its own key, currently valid, for `IP:127.0.0.1, DNS:localhost`.
    public let selfSignedCertificatePath: String

    /// The expired certificate as an nginx TLS listener.
    public var expiredListener: NginxServer.TLSListener {
        NginxServer.TLSListener(certificatePath: expiredCertificatePath, privateKeyPath: keyPath)
    }

    /// The other-host certificate as an nginx TLS listener.
    public var otherHostListener: NginxServer.TLSListener {
        NginxServer.TLSListener(certificatePath: otherHostCertificatePath, privateKeyPath: keyPath)
    }

    /// The self-signed certificate as an nginx TLS listener.
    public var selfSignedListener: NginxServer.TLSListener {
        NginxServer.TLSListener(certificatePath: selfSignedCertificatePath, privateKeyPath: keyPath)
    }

    /// Makes the three certificates with the CA and server key of `authority`.
    ///
    /// - Throws: ``ChildProcessError`` when `openssl` is missing (naming its Debian package) or
    ///   fails; a file error when the files cannot be written. Nothing is left behind then.
    public static func generate(signedBy authority: TestCertificates) async throws -> AuthTestCertificates {
        let openssl = try ChildProcess.executable(named: "openssl", debianPackage: TestCertificates.debianPackage)
        let directory = try TemporaryDirectory(prefix: "peregrine-auth-certificates")
        do {
            let key = authority.serverKeyPath
            let request = directory.path("server.csr")
            try await ChildProcess.run(
                openssl, ["req", "-new", "-key", key, "-out", request, "-subj", "/O=Peregrine tests/CN=127.0.0.1"])

            let localExtensions = directory.path("local.ext")
            try extensions(subjectAltName: "IP:127.0.0.1, DNS:localhost")
                .write(toFile: localExtensions, atomically: true, encoding: .utf8)
            let otherExtensions = directory.path("other.ext")
            try extensions(subjectAltName: "DNS:other.example")
                .write(toFile: otherExtensions, atomically: true, encoding: .utf8)

            // `openssl ca` keeps a database; a throw-away one in the directory is enough.
            let database = directory.path("index.txt")
            _ = FileManager.default.createFile(atPath: database, contents: nil)
            try "01\n".write(toFile: directory.path("serial.txt"), atomically: true, encoding: .utf8)
            let caConfiguration = directory.path("ca.cnf")
            try """
            [ ca ]
            default_ca = test_ca
            [ test_ca ]
            database = \(database)
            new_certs_dir = \(directory.path)
            serial = \(directory.path("serial.txt"))
            default_md = sha256
            policy = policy_any
            unique_subject = no
            [ policy_any ]
            commonName = supplied
            organizationName = optional

            """.write(toFile: caConfiguration, atomically: true, encoding: .utf8)

            let expired = directory.path("expired.pem")
            try await ChildProcess.run(
                openssl,
                [
                    "ca", "-batch", "-config", caConfiguration, "-cert", authority.caCertificatePath,
                    "-keyfile", authority.caKeyPath, "-in", request, "-out", expired, "-notext",
                    "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-extfile", localExtensions,
                ]
            )

            let otherHost = directory.path("other-host.pem")
            try await ChildProcess.run(
                openssl,
                [
                    "x509", "-req", "-in", request, "-CA", authority.caCertificatePath, "-CAkey", authority.caKeyPath,
                    "-set_serial", String(UInt64.random(in: 1...UInt64(Int64.max))), "-days", "2", "-sha256",
                    "-extfile", otherExtensions, "-out", otherHost,
                ]
            )

            let selfSigned = directory.path("self-signed.pem")
            try await ChildProcess.run(
                openssl,
                [
                    "req", "-x509", "-new", "-key", key, "-out", selfSigned, "-days", "2", "-sha256",
                    "-subj", "/O=Peregrine tests/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1, DNS:localhost",
                    "-addext", "basicConstraints=critical,CA:FALSE",
                ]
            )
            return AuthTestCertificates(
                directory: directory, keyPath: key, expiredCertificatePath: expired,
                otherHostCertificatePath: otherHost, selfSignedCertificatePath: selfSigned)
        } catch {
            directory.remove()
            throw error
        }
    }

    private static func extensions(subjectAltName: String) -> String {
        """
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature, keyEncipherment
        extendedKeyUsage = serverAuth
        subjectAltName = \(subjectAltName)

        """
    }

    /// Removes every generated file (not the CA set's).
    public func remove() { directory.remove() }
}
