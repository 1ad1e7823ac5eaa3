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
    /// A rolling restart of a fleet, as an operator does one: three `peregrined` sharing a queue in
    /// PostgreSQL and one download directory, 300 downloads running, each service in turn stopped
    /// with SIGTERM and started again with its state. A task's GID is the queue's: after each
    /// restart every GID answers on every service, at the end every one says `complete` on every
    /// service, and every file is there once under its own name.
    @Suite(.serialized) struct FleetRollingRestartTests {
        static let services = 3
        static let files = 300
        static let slots = 8

        @Test func everyGIDAnswersOnEveryServiceThroughARollingRestart() async throws {
            let tool = try #require(
                ChildProcess.builtProduct(named: "peregrined"),
                "no peregrined beside the tests: build with --build-tests")
            var random = SeededRandom(seed: 5501)
            let scratch = try TemporaryDirectory(prefix: "fleet-rolling")
            defer { scratch.remove() }
            let postgres = try PostgresServer()
            defer { postgres.stop() }
            try await postgres.start()
            try await postgres.createDatabase("rolling")
            let connectionString = postgres.connectionString(database: "rolling")
            // 64 KiB a second a connection: the downloads run through the restarts.
            let nginx = try NginxServer(NginxServer.Configuration(limitRate: 65_536))
            defer { nginx.stop() }
            var contents: [String: Data] = [:]
            for index in 0..<Self.files {
                let data = Data(random.bytes(Int.random(in: 16_384...65_536, using: &random)))
                try data.write(to: URL(fileURLWithPath: nginx.documentPath("/g\(index).bin")))
                contents["g\(index).bin"] = data
            }
            try await nginx.start()

            let shared = scratch.path("downloads")
            func start(_ index: Int) async throws -> DaemonProcess {
                try await DaemonProcess(
                    tool,
                    [
                        "--dir", shared, "--state", scratch.path("state-\(index)"), "--rpc-listen-port", "{port}",
                        "--queue", "rolling", "--lease", "10", "--fleet-slots", String(Self.slots),
                    ], log: scratch.path("daemon-\(index).log"), environment: ["PEREGRINE_STORE": connectionString])
            }
            var daemons: [DaemonProcess] = []
            defer { for daemon in daemons { daemon.stop() } }
            for index in 0..<Self.services { daemons.append(try await start(index)) }

            var gids: [String] = []
            for (batch, first) in stride(from: 0, to: Self.files, by: 50).enumerated() {
                let calls = (first..<min(first + 50, Self.files)).map {
                    "{\"methodName\":\"aria2.addUri\",\"params\":[[\"\(nginx.httpURL("/g\($0).bin"))\"]]}"
                }
                let answer = try await daemons[batch % Self.services].call(
                    "system.multicall", "[\(calls.joined(separator: ","))]")
                let results = try #require(answer["result"] as? [Any], "\(answer)")
                gids += results.compactMap { ($0 as? [Any])?.first as? String }
            }
            try #require(gids.count == Self.files)

            /// Each GID's status on each service (nil: not found there).
            func statuses() async throws -> [[String?]] {
                var all: [[String?]] = []
                for daemon in daemons {
                    let calls = gids.map { "{\"methodName\":\"aria2.tellStatus\",\"params\":[\"\($0)\",[\"status\"]]}" }
                    let answer = try await daemon.call("system.multicall", "[\(calls.joined(separator: ","))]")
                    let results = try #require(answer["result"] as? [Any], "\(answer)")
                    all.append(results.map { (($0 as? [Any])?.first as? [String: Any])?["status"] as? String })
                }
                return all
            }

            for index in 0..<Self.services {
                try await Task.sleep(for: .milliseconds(Int.random(in: 300...1_500, using: &random)))
                #expect(await daemons[index].signal(SIGTERM) == 0, "\(daemons[index].logText)")
                daemons[index] = try await start(index)
                for (service, answers) in try await statuses().enumerated() {
                    let missing = zip(gids, answers).filter { $0.1 == nil }.map(\.0)
                    #expect(missing.isEmpty, "after restarting service \(index), service \(service) lost \(missing)")
                }
            }

            let deadline = ContinuousClock.now + .seconds(180)
            while try await postgres.psql(
                "SELECT count(*) FROM peregrine_tasks WHERE store = 'rolling' AND state = 'finished'",
                database: "rolling")
                != String(Self.files)
            {
                guard ContinuousClock.now < deadline else {
                    Issue.record("the downloads did not finish: \(daemons.map(\.logText))")
                    return
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            for (service, answers) in try await statuses().enumerated() {
                let other = zip(gids, answers).filter { $0.1 != "complete" }
                #expect(other.isEmpty, "on service \(service): \(other.prefix(10))")
            }
            let entries = try FileManager.default.contentsOfDirectory(atPath: shared)
            #expect(entries.sorted() == contents.keys.sorted(), "\(entries.filter { contents[$0] == nil })")
            for (name, data) in contents {
                #expect(FileManager.default.contents(atPath: shared + "/" + name) == data, "\(name)")
            }
            for daemon in daemons { #expect(await daemon.signal(SIGTERM) == 0, "\(daemon.logText)") }
        }
    }
}
