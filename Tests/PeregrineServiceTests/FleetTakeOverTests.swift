import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Nested in FleetDaemonTests, whose suites of processes run one at a time: each starts a
// PostgreSQL, an nginx and several services, too much for two cores at once beside the rest.
extension FleetDaemonTests {
    /// A fleet service killed with SIGKILL in the first seconds of large files, with the default
    /// lease: another service sharing its download directory takes the tasks over once the leases
    /// run out and continues the partial files from the progress the queue recorded — which moves
    /// with the synced bytes about every second, not only at lease renewals (a third of the lease) —
    /// so nginx sends at most 1.3 times the files' bytes in all. Seed: `PEREGRINE_TAKEOVER_SEED`.
    @Suite(.serialized) struct FleetTakeOverTests {
        static let files = 3
        static let size = 3 << 20
        /// nginx's rate per connection: a file takes 12 s.
        static let rate = 262_144

        @Test func aServiceKilledEarlyInLargeFilesCostsLittleToTakeOver() async throws {
            let tool = try #require(
                ChildProcess.builtProduct(named: "peregrined"),
                "no peregrined beside the tests: build with --build-tests")
            let seed = SeededRandom.seeds(from: "PEREGRINE_TAKEOVER_SEED", defaults: [4409])[0]
            var random = SeededRandom(seed: seed)
            let scratch = try TemporaryDirectory(prefix: "fleet-takeover-early")
            defer { scratch.remove() }
            let postgres = try PostgresServer()
            defer { postgres.stop() }
            try await postgres.start()
            try await postgres.createDatabase("early")
            let connectionString = postgres.connectionString(database: "early")
            let accessLog = scratch.path("access.log")
            let nginx = try NginxServer(
                NginxServer.Configuration(
                    limitRate: Self.rate, extraDirectives: ["access_log \(accessLog) early;"],
                    httpDirectives: ["log_format early '$request_uri $status $body_bytes_sent';"]))
            defer { nginx.stop() }
            var contents: [String: Data] = [:]
            for index in 0..<Self.files {
                let data = Data(random.bytes(Self.size))
                try data.write(to: URL(fileURLWithPath: nginx.documentPath("/large\(index).bin")))
                contents["large\(index).bin"] = data
            }
            try await nginx.start()

            let shared = scratch.path("downloads")
            func service(_ name: String) async throws -> DaemonProcess {
                try await DaemonProcess(
                    tool,
                    [
                        "--dir", shared, "--state", scratch.path("state-\(name)"), "--rpc-listen-port", "{port}",
                        "--queue", "early", "--fleet-slots", String(Self.files),
                    ], log: scratch.path("daemon-\(name).log"), environment: ["PEREGRINE_STORE": connectionString])
            }
            let victim = try await service("victim")
            defer { victim.stop() }
            let calls = (0..<Self.files).map {
                // Into a folder of the root, which the task carries through the queue and the take-over.
                "{\"methodName\":\"aria2.addUri\",\"params\":[[\"\(nginx.httpURL("/large\($0).bin"))\"],{\"dir\":\"taken/over\"}]}"
            }
            let answer = try await victim.call("system.multicall", "[\(calls.joined(separator: ","))]")
            try #require((answer["result"] as? [Any])?.count == Self.files, "\(answer)")
            // Killed in the first seconds, before the first lease renewal (10 s with the default lease).
            let delay = Int.random(in: 4_000...7_000, using: &random)
            try await Task.sleep(for: .milliseconds(delay))
            await victim.signal(SIGKILL)
            let heir = try await service("heir")
            defer { heir.stop() }

            let deadline = ContinuousClock.now + .seconds(180)
            while try await postgres.psql(
                "SELECT count(*) FROM peregrine_tasks WHERE store = 'early' AND state = 'finished'", database: "early")
                != String(Self.files)
            {
                guard ContinuousClock.now < deadline else {
                    Issue.record("the tasks did not finish: \(heir.logText)")
                    return
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            for (name, data) in contents {
                #expect(FileManager.default.contents(atPath: shared + "/taken/over/" + name) == data, "\(name)")
            }
            let entries = try FileManager.default.contentsOfDirectory(atPath: shared + "/taken/over")
            #expect(entries.sorted() == contents.keys.sorted(), "\(entries)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: shared) == ["taken"], "partial files left")

            // What nginx sent for the files, against their size.
            let lines = try String(contentsOfFile: accessLog, encoding: .utf8).split(separator: "\n")
            let sent = lines.reduce(0) { total, line in total + (Int(line.split(separator: " ")[2]) ?? 0) }
            let ratio = Double(sent) / Double(Self.files * Self.size)
            print("fleet take-over: seed \(seed), killed after \(delay) ms, nginx sent \(ratio) × the files")
            #expect(ratio <= 1.3, "nginx sent \(sent) bytes for \(Self.files * Self.size): \(lines)")
            #expect(await heir.signal(SIGTERM) == 0, "\(heir.logText)")
        }
    }
}
