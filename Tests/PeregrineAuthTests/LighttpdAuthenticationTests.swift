import Foundation
import PeregrineAuth
import PeregrineCore
import PeregrineCurlTransport
import PeregrineTransport
import PeregrineVerification
import Synchronization
import TestSupport
import Testing

/// Basic and Digest against a real lighttpd (`mod_auth` with htpasswd and htdigest files),
/// through `AuthenticatingTransport(wrapping: CurlTransport())`.
@Suite("Authentication against lighttpd")
struct LighttpdAuthenticationTests {
    static let alice = LighttpdServer.User(name: "alice", password: "correct horse")
    static let jason = LighttpdServer.User(name: "J\u{E4}s\u{F8}n", password: "p\u{E4}ssw\u{F6}rd")

    /// A running lighttpd with one 256 KiB random file per protected location.
    struct Fixture {
        let server: LighttpdServer
        let digests: [String: String]

        static func start() async throws -> Fixture {
            let server = try LighttpdServer(
                .init(
                    users: [alice, jason],
                    protectedLocations: [
                        .init(pathPrefix: "/basic/", realm: "Basic Files", method: .basic),
                        .init(pathPrefix: "/md5/", realm: "MD5 Files", method: .digest(algorithms: ["MD5"])),
                        .init(
                            pathPrefix: "/sha256/", realm: "SHA-256 Files", method: .digest(algorithms: ["SHA-256"]),
                            userhash: true),
                        .init(
                            pathPrefix: "/all/", realm: "All Files",
                            method: .digest(algorithms: ["MD5", "SHA-256", "SHA-512-256"])),
                    ]))
            do {
                var digests: [String: String] = [:]
                for path in ["/basic/file.bin", "/md5/file.bin", "/sha256/a.bin", "/sha256/b.bin", "/all/file.bin"] {
                    digests[path] = try writeRandomFile(size: 256 << 10, to: server.documentPath(path))
                }
                try await server.start()
                return Fixture(server: server, digests: digests)
            } catch {
                server.stop()
                throw error
            }
        }

        /// The decorator over libcurl, with `user`'s credential stored for the server's origin
        /// and plain http allowed for 127.0.0.1 (the test server has no TLS).
        func transport(
            user: LighttpdServer.User = alice, password: String? = nil,
            configuration: AuthenticatingTransport.Configuration = .init(plainHTTPHosts: ["127.0.0.1"]),
            cache: AuthenticationCache = AuthenticationCache()
        ) throws -> (AuthenticatingTransport, CurlTransport) {
            let curl = CurlTransport()
            let store = CredentialStore()
            store.set(
                Credential(user: user.name, password: password ?? user.password),
                for: ProtectionSpace(url: try DownloadURL(server.baseURL)))
            return (
                AuthenticatingTransport(wrapping: curl, credentials: store, cache: cache, configuration: configuration),
                curl
            )
        }

        /// Downloads `path` and returns the result and the SHA-256 of the bytes received.
        func download(_ path: String, with transport: AuthenticatingTransport) async throws -> (
            Result<TransferSummary, TransportError>, String
        ) {
            let sink = MemorySink()
            let (result, _) = await transport.run(try TransferRequest(url: server.url(path)), sink: sink)
            return (result, try StreamingHasher.digest(.sha256, of: sink.bytes).hexString)
        }

        /// The `Authorization` values lighttpd received for `path`, nil where none was sent.
        func authorizations(for path: String) -> [String?] {
            server.requests(for: path).map { $0.headers["Authorization"] }
        }
    }

    @Test func basicDownloadArrivesIntact() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.server.stop() }
        let (transport, curl) = try fixture.transport()
        defer { curl.shutdown() }

        let (result, digest) = try await fixture.download("/basic/file.bin", with: transport)

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))\n\(fixture.server.errorLog)")
        #expect(digest == fixture.digests["/basic/file.bin"])
        #expect(fixture.authorizations(for: "/basic/file.bin") == [nil, "Basic YWxpY2U6Y29ycmVjdCBob3JzZQ=="])
    }

    @Test func digestMD5DownloadArrivesIntact() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.server.stop() }
        let (transport, curl) = try fixture.transport()
        defer { curl.shutdown() }

        let (result, digest) = try await fixture.download("/md5/file.bin", with: transport)

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))\n\(fixture.server.errorLog)")
        #expect(digest == fixture.digests["/md5/file.bin"])
        let sent = fixture.authorizations(for: "/md5/file.bin")
        #expect(sent.count == 2)
        #expect(
            sent.last??.hasPrefix(
                #"Digest username="alice", realm="MD5 Files", uri="/md5/file.bin", algorithm=MD5, nonce=""#) == true)
        #expect(sent.last??.contains("nc=00000001") == true)
    }

    @Test func digestSHA256WithUserhashDownloadArrivesIntact() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.server.stop() }
        let (transport, curl) = try fixture.transport()
        defer { curl.shutdown() }

        let (result, digest) = try await fixture.download("/sha256/a.bin", with: transport)

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))\n\(fixture.server.errorLog)")
        #expect(digest == fixture.digests["/sha256/a.bin"])
        let header = try #require(fixture.authorizations(for: "/sha256/a.bin").last ?? nil)
        let userhash = try StreamingHasher.digest(.sha256, of: "alice:SHA-256 Files".utf8).hexString
        #expect(header.hasPrefix(#"Digest username="\#(userhash)", realm="SHA-256 Files""#))
        #expect(header.contains("algorithm=SHA-256") && header.hasSuffix("userhash=true"))
    }

    @Test func strongestOfThreeDigestChallengesIsSHA512_256() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.server.stop() }
        let (transport, curl) = try fixture.transport()
        defer { curl.shutdown() }

        let (result, digest) = try await fixture.download("/all/file.bin", with: transport)

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))\n\(fixture.server.errorLog)")
        #expect(digest == fixture.digests["/all/file.bin"])
        let challenges = fixture.server.requests(for: "/all/file.bin")
        #expect(challenges.count == 2)
        #expect(fixture.authorizations(for: "/all/file.bin").last??.contains("algorithm=SHA-512-256") == true)
    }

    @Test func nonASCIIUserIsSentAsExtendedValue() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.server.stop() }
        let (transport, curl) = try fixture.transport(user: Self.jason)
        defer { curl.shutdown() }

        let (result, digest) = try await fixture.download("/all/file.bin", with: transport)

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))\n\(fixture.server.errorLog)")
        #expect(digest == fixture.digests["/all/file.bin"])
        #expect(
            fixture.authorizations(for: "/all/file.bin").last??.hasPrefix("Digest username*=UTF-8''J%C3%A4s%C3%B8n,")
                == true)
    }

    @Test func wrongDigestPasswordFailsAfterExactlyOneRetry() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.server.stop() }
        let (transport, curl) = try fixture.transport(password: "wrong")
        defer { curl.shutdown() }

        let (result, _) = try await fixture.download("/md5/file.bin", with: transport)

        let error = try #require(result.error)
        #expect(error.failureReason.code == .authentication)
        #expect(error.failureReason.message.contains("\"MD5 Files\""))
        #expect(fixture.server.requests(for: "/md5/file.bin").count == 2)
    }

    @Test func wrongBasicPasswordFailsAfterExactlyOneRetry() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.server.stop() }
        let (transport, curl) = try fixture.transport(password: "wrong")
        defer { curl.shutdown() }

        let (result, _) = try await fixture.download("/basic/file.bin", with: transport)

        #expect(result.error?.failureReason.code == .authentication)
        #expect(result.error?.message.contains("\"Basic Files\"") == true)
        #expect(fixture.server.requests(for: "/basic/file.bin").count == 2)
    }

    @Test func secondDownloadIsPreemptiveWithTheNextNonceCount() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.server.stop() }
        let (transport, curl) = try fixture.transport()
        defer { curl.shutdown() }

        let (first, _) = try await fixture.download("/sha256/a.bin", with: transport)
        let (second, digest) = try await fixture.download("/sha256/b.bin", with: transport)

        #expect(first.summary != nil && second.summary != nil, "\(fixture.server.errorLog)")
        #expect(digest == fixture.digests["/sha256/b.bin"])
        let sent = fixture.authorizations(for: "/sha256/b.bin")
        #expect(sent.count == 1)
        #expect(sent.first??.contains("nc=00000002") == true)
        let firstNonce = fixture.authorizations(for: "/sha256/a.bin").last??.nonce
        #expect(firstNonce != nil && sent.first??.nonce == firstNonce)
    }

    @Test func staleNonceIsRenewedWithoutAskingForCredentials() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.server.stop() }
        let asked = Atomic<Int>(0)
        let cache = AuthenticationCache()
        // A nonce lighttpd made long ago (its nonces start with the hex time of their making).
        cache.rememberDigest(
            DigestChallenge(realm: "MD5 Files", nonce: "1:0123456789abcdef0123456789abcdef"),
            credential: Credential(user: Self.alice.name, password: Self.alice.password),
            for: try DownloadURL(fixture.server.baseURL))
        let (transport, curl) = try fixture.transport(
            configuration: .init(
                plainHTTPHosts: ["127.0.0.1"],
                challengeHandler: .closure { _ in
                    asked.add(1, ordering: .relaxed)
                    return .performDefaultHandling
                }),
            cache: cache)
        defer { curl.shutdown() }

        let (result, digest) = try await fixture.download("/md5/file.bin", with: transport)

        #expect(result.summary?.head.status == 200, "\(String(describing: result.error))\n\(fixture.server.errorLog)")
        #expect(digest == fixture.digests["/md5/file.bin"])
        #expect(asked.load(ordering: .relaxed) == 0)
        let sent = fixture.authorizations(for: "/md5/file.bin")
        #expect(sent.count == 2)
        #expect(sent.first??.nonce == "1:0123456789abcdef0123456789abcdef")
        #expect(sent.last??.nonce != "1:0123456789abcdef0123456789abcdef")
    }

    @Test func plainHTTPWithoutAllowanceSendsNoCredentials() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.server.stop() }
        let (transport, curl) = try fixture.transport(configuration: .init())
        defer { curl.shutdown() }

        let (result, _) = try await fixture.download("/basic/file.bin", with: transport)

        #expect(result.error?.failureReason.code == .authentication)
        #expect(result.error?.message.contains("plain http") == true)
        #expect(fixture.authorizations(for: "/basic/file.bin") == [nil])
    }
}

extension String {
    /// The `nonce` parameter of a Digest Authorization value.
    fileprivate var nonce: String? {
        guard let value = try? AuthenticationChallengeParser().parse(self).first else { return nil }
        return value[parameter: "nonce"]
    }
}

/// Writes `size` random bytes to `path` (making its directory) and returns their SHA-256 in hex.
func writeRandomFile(size: Int, to path: String) throws -> String {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
    try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
    }
    return try StreamingHasher.digest(.sha256, of: bytes).hexString
}
