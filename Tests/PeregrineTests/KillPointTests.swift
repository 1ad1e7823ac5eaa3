import Foundation
import TestSupport
import Testing

/// `peregrine-queue run` killed with SIGKILL at chosen instructions of the crash-sensitive steps
/// (see `KillPoint`): after a file is linked into place but before its record reaches the store,
/// after the record is durable but before the temporary name is removed, between the journal's
/// write and its sync, and after the sync. A second run must then find every file exactly once,
/// under its own name (no `name (1).ext`), with the served bytes, no temporary file left behind,
/// and no file that was in place fetched again (nginx's access log).
@Suite struct KillPointTests {
    static let points = ["engine.placed", "manager.durable", "engine.leftover-link", "store.written", "store.synced"]

    @Test(arguments: points, [1, 3])
    func killAtAPointLosesAndDuplicatesNothing(point: String, time: Int) async throws {
        let tool = try #require(
            PeregrineQueueTests.executable,
            "no peregrine-queue binary beside the tests: build with `swift build --build-tests`")
        let logs = try TemporaryDirectory(prefix: "peregrine-kill-log")
        defer { logs.remove() }
        let accessLog = logs.path("access.log")
        let server = try NginxServer(.init(extraDirectives: ["access_log \(accessLog);"]))
        try await server.start()
        defer { server.stop() }

        var urls: [String] = []
        var served: [String: String] = [:]
        var checksums: [String] = []
        for index in 0..<4 {
            let name = "/file\(index).bin"
            // Distinct bytes per file, from the index: any mix-up shows in the digests.
            let content = Data((0..<(40_000 + index * 9_973)).map { UInt8(truncatingIfNeeded: $0 &* (index + 3)) })
            try content.write(to: URL(fileURLWithPath: server.documentPath(name)))
            let digest = try await PeregrineQueueTests.sha256(of: server.documentPath(name))
            urls.append(server.httpURL(name))
            served[String(name.dropFirst())] = digest
            checksums.append("sha256=\(digest)")
        }
        let state = try TemporaryDirectory(prefix: "peregrine-kill-\(point)")
        defer { state.remove() }
        var add = ["--state", state.path, "add"] + urls
        for checksum in checksums { add += ["--checksum", checksum] }
        try await ChildProcess.run(tool, add)

        // One download at a time: the one being placed is the only transfer when the kill comes,
        // so a file fetched twice can only be a placed file downloaded again.
        let killed = try await ChildProcess.run(
            tool, ["--state", state.path, "run", "--parallel", "1"],
            environment: ["PEREGRINE_KILL_AT": "\(point):\(time)"], allowFailure: true)
        #expect(killed.status == SIGKILL, "the run was not killed at \(point):\(time): \(killed.text)")
        let downloads = state.path("downloads")
        let placedBeforeRerun = try FileManager.default.contentsOfDirectory(atPath: downloads).filter {
            !$0.hasPrefix(".")
        }
        let fetchesBeforeRerun = Self.lines(of: accessLog).count

        let rerun = try await ChildProcess.run(tool, ["--state", state.path, "run"], allowFailure: true)
        #expect(rerun.status == 0, "the second run failed: \(rerun.text) \(rerun.errorText)")

        let names = try FileManager.default.contentsOfDirectory(atPath: downloads).sorted()
        let details = names.map { name -> String in
            var status = stat()
            _ = lstat(downloads + "/" + name, &status)
            return "\(name) inode \(status.st_ino) links \(status.st_nlink) size \(status.st_size)"
        }
        #expect(
            names == served.keys.sorted(),
            "after a kill at \(point):\(time): \(details); killed run: \(killed.text) \(killed.errorText); rerun: \(rerun.text) \(rerun.errorText)"
        )
        for (name, digest) in served {
            #expect(try await PeregrineQueueTests.sha256(of: downloads + "/" + name) == digest, "\(name)")
        }
        let listed = try await ChildProcess.run(tool, ["--state", state.path, "list"])
        #expect(listed.text.split(separator: "\n").allSatisfy { $0.hasPrefix("finished\t") }, "\(listed.text)")

        // A file in place when the process died is adopted, never fetched again; the transfer
        // that was running may start again.
        server.stop()
        let rerunFetches = Self.lines(of: accessLog).dropFirst(fetchesBeforeRerun)
        for name in placedBeforeRerun {
            let fetches = rerunFetches.filter { $0.contains("GET /\(name) ") }
            #expect(fetches.isEmpty, "\(name) was in place after the kill at \(point):\(time), yet fetched again")
        }
    }

    static func lines(of path: String) -> [Substring] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
    }
}
