import Foundation
import TestSupport
import Testing

/// The test nginx itself, checked with the `curl` command line, independently of Peregrine.
@Suite("NginxServer")
struct NginxServerTests {
    @Test func servesRangesWithStrongValidators() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        try Data("0123456789abcdef".utf8).write(to: URL(fileURLWithPath: server.documentPath("/digits.txt")))
        let curl = try ChildProcess.executable(named: "curl", debianPackage: "curl")

        let output = try await ChildProcess.run(curl, ["-sS", "-i", "-r", "10-", server.httpURL("/digits.txt")])

        let lines = output.text.split(whereSeparator: \.isNewline).map(String.init)
        #expect(lines.first?.hasPrefix("HTTP/1.1 206") == true, "\(output.text)")
        #expect(lines.contains("Content-Range: bytes 10-15/16"))
        #expect(lines.contains { $0.hasPrefix("ETag: \"") })
        #expect(lines.contains { $0.hasPrefix("Last-Modified: ") })
        #expect(lines.last == "abcdef")
    }

    @Test func originVariablesNameTheServersOwnListeners() async throws {
        let server = try NginxServer(
            .init(extraDirectives: [
                "location = /origin { return 200 \(NginxServer.httpOriginVariable); }"
            ]))
        defer { server.stop() }
        try await server.start()
        let curl = try ChildProcess.executable(named: "curl", debianPackage: "curl")

        let output = try await ChildProcess.run(curl, ["-sS", server.httpURL("/origin")])

        #expect(output.text == server.httpBaseURL)
    }

    @Test func stopEndsNginxAndRemovesItsDirectory() async throws {
        let server = try NginxServer()
        defer { server.stop() }
        try await server.start()
        let port = server.httpPort
        let pidText = try String(contentsOfFile: server.directory.path("nginx.pid"), encoding: .utf8)
        let pid = try #require(Int32(pidText.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(server.isRunning)
        #expect(FreePort.isAccepting(port))

        server.stop()

        #expect(!server.isRunning)
        #expect(!FreePort.isAccepting(port))
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        #expect(status.isEmpty, "nginx (pid \(pid)) is still there: \(status.prefix(200))")
        #expect(!server.directory.exists)
    }

    @Test func configurationErrorFailsStartWithNginxsErrorLog() async throws {
        let server = try NginxServer(.init(extraDirectives: ["no_such_directive on;"]))
        defer { server.stop() }

        let error = await #expect(throws: NginxServerError.self) { try await server.start() }

        #expect(error?.errorLog.contains("no_such_directive") == true, "\(String(describing: error))")
        #expect(!server.isRunning)
    }

    @Test func missingNginxFailsNamingTheDebianPackage() throws {
        let error = #expect(throws: NginxServerError.self) {
            _ = try NginxServer(.init(executablePath: "/nonexistent/sbin/nginx"))
        }

        #expect(error?.message.contains("nginx-light") == true, "\(String(describing: error))")
        #expect(error?.message.contains("/nonexistent/sbin/nginx") == true)
    }
}
