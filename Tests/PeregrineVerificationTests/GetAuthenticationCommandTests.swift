import Foundation
import PeregrineVerification
import TestSupport
import Testing

/// `peregrine get --user --auth --auth-over-http` against a real lighttpd with Basic and Digest
/// (`mod_auth`, htpasswd and htdigest files): the CLI's authentication flags end to end.
@Suite("peregrine get --user")
struct GetAuthenticationCommandTests {
    static let alice = LighttpdServer.User(name: "alice", password: "correct horse")

    /// A running lighttpd with one random file under each protected location, and its bytes.
    static func start() async throws -> (LighttpdServer, [UInt8]) {
        let server = try LighttpdServer(
            .init(
                users: [alice],
                protectedLocations: [
                    .init(pathPrefix: "/basic/", realm: "Basic Files", method: .basic),
                    .init(pathPrefix: "/digest/", realm: "Digest Files", method: .digest(algorithms: ["SHA-256"])),
                ]))
        let data = ChecksumTestFiles.bytes(200_000, seed: 0xA17)
        do {
            for path in ["/basic/f.bin", "/digest/f.bin"] {
                try FileManager.default.createDirectory(
                    atPath: (server.documentPath(path) as NSString).deletingLastPathComponent,
                    withIntermediateDirectories: true)
                try ChecksumTestFiles.write(data, to: server.documentPath(path))
            }
            try await server.start()
        } catch {
            server.stop()
            throw error
        }
        return (server, data)
    }

    @Test(arguments: [("/basic/f.bin", "basic"), ("/digest/f.bin", "digest"), ("/digest/f.bin", "any")])
    func rightCredentialsDownloadTheFile(_ path: String, _ scheme: String) async throws {
        let (server, data) = try await Self.start()
        defer { server.stop() }
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-auth")
        defer { downloads.remove() }
        let output = try await VerifyCommandExecutable.run([
            "get", server.url(path), "-d", downloads.path, "--quiet", "--user", "alice:correct horse", "--auth", scheme,
            "--auth-over-http",
        ])
        #expect(output.status == 0, "\(output.errorText)")
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: downloads.path("f.bin")))) == data)
    }

    @Test func wrongPasswordFailsNamingTheRealmAndLeavesNoFile() async throws {
        let (server, _) = try await Self.start()
        defer { server.stop() }
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-auth")
        defer { downloads.remove() }
        let output = try await VerifyCommandExecutable.run([
            "get", server.url("/digest/f.bin"), "-d", downloads.path, "--quiet", "--user", "alice:wrong",
            "--auth-over-http",
        ])
        #expect(output.status != 0)
        #expect(output.errorText.contains("rejected the credentials"), "\(output.errorText)")
        #expect(output.errorText.contains("Digest Files"), "\(output.errorText)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)
    }

    @Test func credentialsAreNotSentOverPlainHTTPUnlessAllowed() async throws {
        let (server, _) = try await Self.start()
        defer { server.stop() }
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-auth")
        defer { downloads.remove() }
        let output = try await VerifyCommandExecutable.run([
            "get", server.url("/basic/f.bin"), "-d", downloads.path, "--quiet", "--user", "alice:correct horse",
        ])
        #expect(output.status != 0)
        let authorized = server.requests(for: "/basic/f.bin").filter { $0.headers["Authorization"] != nil }
        #expect(authorized.isEmpty, "no Authorization header went over plain http")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)
    }

    @Test func aSchemeTheServerDoesNotOfferIsNotAnswered() async throws {
        let (server, _) = try await Self.start()
        defer { server.stop() }
        let downloads = try TemporaryDirectory(prefix: "peregrine-cli-auth")
        defer { downloads.remove() }
        let output = try await VerifyCommandExecutable.run([
            "get", server.url("/digest/f.bin"), "-d", downloads.path, "--quiet", "--user", "alice:correct horse",
            "--auth", "basic", "--auth-over-http",
        ])
        #expect(output.status != 0)
        let requests = server.requests(for: "/digest/f.bin")
        #expect(
            requests.allSatisfy { $0.headers["Authorization"] == nil },
            "a Basic header was never sent to a Digest realm")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)
    }
}
