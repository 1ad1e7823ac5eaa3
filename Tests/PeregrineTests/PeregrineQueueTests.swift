import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `peregrine-queue` example killed with SIGKILL in the middle of a download, then run again:
/// it must continue from the offset its store persisted and end with the served file's bytes.
@Suite struct PeregrineQueueTests {
    /// The `peregrine-queue` binary built beside this test binary.
    static var executable: String? {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: me).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("peregrine-queue").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    @Test func killedRunResumesFromThePersistedOffset() async throws {
        let tool = try #require(
            Self.executable, "no peregrine-queue binary beside the tests: build with `swift build --build-tests`")
        let server = try NginxServer(.init(limitRate: 256 << 10))
        try await server.start()
        defer { server.stop() }
        let size = 3 << 20
        var generator = SystemRandomNumberGenerator()
        let content = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try content.write(to: URL(fileURLWithPath: server.documentPath("/big.bin")))
        let expected = try await Self.sha256(of: server.documentPath("/big.bin"))
        let url = server.httpURL("/big.bin")

        let state = try TemporaryDirectory(prefix: "peregrine-queue")
        defer { state.remove() }
        let added = try await ChildProcess.run(
            tool, ["--state", state.path, "add", url, "--checksum", "sha256=\(expected)"])
        #expect(added.text.contains("added \(url)"))

        // First run: killed once the partial file holds a third of the file (the store has seen
        // several checkpoints by then: one a second, flushed within 200 ms).
        let downloads = state.path("downloads")
        let firstOutput = state.path("first-run.log")
        _ = FileManager.default.createFile(atPath: firstOutput, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["--state", state.path, "run"]
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: firstOutput))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let grown = await onOwnThread { () -> Int64? in
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, process.isRunning {
                if let partial = Self.partialFileSize(in: downloads), partial > Int64(size / 3) { return partial }
                usleep(20_000)
            }
            return nil
        }
        kill(process.processIdentifier, SIGKILL)
        await onOwnThread { process.waitUntilExit() }
        try? log.close()
        let first = String(decoding: FileManager.default.contents(atPath: firstOutput) ?? Data(), as: UTF8.self)
        _ = try #require(grown, "the partial file never grew past a third; first run said: \(first)")
        let onDiskAfterKill = try #require(Self.partialFileSize(in: downloads))
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(!FileManager.default.fileExists(atPath: downloads + "/big.bin"))

        // Second run: resumes from the persisted offset, which never exceeds what was on disk.
        let second = try await ChildProcess.run(tool, ["--state", state.path, "run"], allowFailure: true)
        #expect(second.status == 0, "second run failed: \(second.text) \(second.errorText)")
        let resumeLine = second.text.split(separator: "\n").first { $0.hasPrefix("resume \(url) from byte ") }
        let offset = try #require(
            resumeLine.flatMap { Int64($0.split(separator: " ").last ?? "") },
            "no resume line in: \(second.text)")
        #expect(offset > 0)
        // The persisted offset never claims bytes that did not reach the file.
        #expect(offset <= onDiskAfterKill)
        #expect(second.text.contains("recovered \(url)"))
        #expect(second.text.contains("finished \(url)"))
        #expect(try await Self.sha256(of: downloads + "/big.bin") == expected)

        let listed = try await ChildProcess.run(tool, ["--state", state.path, "list"])
        #expect(listed.text.hasPrefix("finished\t\(url)"))
    }

    @Test func failedDownloadsMakeTheRunFail() async throws {
        let tool = try #require(
            Self.executable, "no peregrine-queue binary beside the tests: build with `swift build --build-tests`")
        let server = try NginxServer()
        try await server.start()
        defer { server.stop() }
        try Data(repeating: 7, count: 10_000).write(to: URL(fileURLWithPath: server.documentPath("/ok.bin")))
        let good = server.httpURL("/ok.bin")
        let missing = server.httpURL("/missing.bin")
        let state = try TemporaryDirectory(prefix: "peregrine-queue")
        defer { state.remove() }
        let wrong = "sha256=" + String(repeating: "0", count: 64)
        try await ChildProcess.run(tool, ["--state", state.path, "add", good, missing])
        let run = try await ChildProcess.run(tool, ["--state", state.path, "run"], allowFailure: true)
        #expect(run.status != 0)
        #expect(run.text.contains("finished \(good)"))
        #expect(run.errorText.contains("failed \(missing)"))
        let listed = try await ChildProcess.run(tool, ["--state", state.path, "list"])
        #expect(listed.text.contains("finished\t\(good)"))
        #expect(listed.text.contains("failed\t\(missing)"))

        let other = try TemporaryDirectory(prefix: "peregrine-queue")
        defer { other.remove() }
        try await ChildProcess.run(tool, ["--state", other.path, "add", good, "--checksum", wrong])
        let mismatch = try await ChildProcess.run(tool, ["--state", other.path, "run"], allowFailure: true)
        #expect(mismatch.status != 0)
        #expect(mismatch.errorText.contains("failed \(good)"))
        #expect(!FileManager.default.fileExists(atPath: other.path("downloads") + "/ok.bin"))
        let again = try await ChildProcess.run(tool, ["--state", other.path, "add", "not a url"], allowFailure: true)
        #expect(again.status != 0)
        #expect(again.errorText.contains("invalid not a url"))
    }

    /// The size of the one hidden partial file in `directory`, if there is one.
    static func partialFileSize(in directory: String) -> Int64? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory),
            let name = names.first(where: { $0.hasPrefix(".") && $0.hasSuffix(".part") }),
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
        else { return nil }
        return (attributes[.size] as? NSNumber)?.int64Value
    }

    /// A file's SHA-256 as lower-case hex, from `sha256sum`.
    static func sha256(of path: String) async throws -> String {
        let tool = try ChildProcess.executable(named: "sha256sum", debianPackage: "coreutils")
        let output = try await ChildProcess.run(tool, [path])
        return String(output.text.prefix(64))
    }
}
