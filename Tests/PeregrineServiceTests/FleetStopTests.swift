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
    /// Graceful stops of fleet services under load, as a `systemctl restart` does them: two
    /// `peregrined --store postgresql://…` sharing one queue and one download directory, hundreds of
    /// tiny downloads added, one service sent SIGTERM at a seeded moment and started again with its
    /// state. Round after round, every process ends (a bound of 60 s guards a hang, and the longest
    /// stop is printed), every file arrives once under its own name with its bytes, no part file is
    /// left, and nginx served each file complete once, beyond what the stopped service had in flight
    /// (`slots` transfers, cancelled at the stop). Rounds: `PEREGRINE_FLEET_STOP_ROUNDS` (20); seed:
    /// `PEREGRINE_FLEET_STOP_SEED`.
    @Suite(.serialized) struct FleetStopTests {
        static let files = 300
        static let slots = 8
        /// A hang guard for a stop, not a timing: stops take well under a second.
        static let stopBound: Duration = .seconds(60)

        @Test func servicesStoppedWithSIGTERMUnderLoadFetchNothingTwice() async throws {
            let tool = try #require(
                ChildProcess.builtProduct(named: "peregrined"),
                "no peregrined beside the tests: build with --build-tests")
            let seed = SeededRandom.seeds(from: "PEREGRINE_FLEET_STOP_SEED", defaults: [3407])[0]
            let rounds = ProcessInfo.processInfo.environment["PEREGRINE_FLEET_STOP_ROUNDS"].flatMap { Int($0) } ?? 20
            var random = SeededRandom(seed: seed)
            let scratch = try TemporaryDirectory(prefix: "fleet-stops")
            defer { scratch.remove() }

            let postgres = try PostgresServer()
            defer { postgres.stop() }
            try await postgres.start()
            try await postgres.createDatabase("fleet")
            let connectionString = postgres.connectionString(database: "fleet")
            let accessLog = scratch.path("access.log")
            let nginx = try NginxServer(
                NginxServer.Configuration(
                    extraDirectives: ["access_log \(accessLog) stops;"],
                    httpDirectives: ["log_format stops '$request_uri $status $body_bytes_sent [$request_completion]';"])
            )
            defer { nginx.stop() }
            var contents: [String: Data] = [:]
            for round in 0..<rounds {
                try FileManager.default.createDirectory(
                    atPath: nginx.documentPath("/r\(round)"), withIntermediateDirectories: true)
                for index in 0..<Self.files {
                    let data = Data(random.bytes(Int.random(in: 512...4096, using: &random)))
                    let path = "/r\(round)/f\(index).bin"
                    try data.write(to: URL(fileURLWithPath: nginx.documentPath(path)))
                    contents[path] = data
                }
            }
            try await nginx.start()

            var longestStop = Duration.zero
            var extraFetches = 0
            for round in 0..<rounds {
                let queue = "stops\(round)"
                let directory = scratch.path("downloads-\(round)")
                func start(_ name: String) async throws -> DaemonProcess {
                    try await DaemonProcess(
                        tool,
                        [
                            "--dir", directory, "--state", scratch.path("state-\(round)-\(name)"), "--rpc-listen-port",
                            "{port}", "--queue", queue, "--lease", "20", "--fleet-slots", String(Self.slots),
                        ], log: scratch.path("daemon-\(round)-\(name).log"),
                        environment: ["PEREGRINE_STORE": connectionString])
                }
                /// Sends SIGTERM and waits for the end, within the hang bound.
                func stop(_ daemon: DaemonProcess) async -> Bool {
                    let began = ContinuousClock.now
                    kill(daemon.process.processIdentifier, SIGTERM)
                    let process = daemon.process
                    let ended =
                        (try? await onOwnThread { () -> Bool in
                            let deadline = Date().addingTimeInterval(Double(Self.stopBound.components.seconds))
                            while process.isRunning, Date() < deadline { usleep(2_000) }
                            return !process.isRunning
                        }) ?? false
                    longestStop = max(longestStop, ContinuousClock.now - began)
                    #expect(
                        ended,
                        "round \(round): a service did not end within \(Self.stopBound) of SIGTERM: \(daemon.logText)")
                    #expect(!ended || process.terminationStatus == 0, "round \(round): \(daemon.logText)")
                    return ended
                }

                var services = [try await start("a"), try await start("b")]
                defer { for service in services { service.stop() } }
                let paths = (0..<Self.files).map { "/r\(round)/f\($0).bin" }
                for (batch, first) in stride(from: 0, to: paths.count, by: 100).enumerated() {
                    let calls = paths[first..<min(first + 100, paths.count)].map {
                        "{\"methodName\":\"aria2.addUri\",\"params\":[[\"\(nginx.httpURL($0))\"]]}"
                    }
                    let answer = try await services[batch % 2].call(
                        "system.multicall", "[\(calls.joined(separator: ","))]")
                    try #require((answer["result"] as? [Any])?.count == calls.count, "\(answer)")
                }
                // The stop comes at a seeded moment while the downloads run, to either service.
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...600, using: &random)))
                let victim = Int.random(in: 0...1, using: &random)
                guard await stop(services[victim]) else { return }
                services[victim] = try await start(victim == 0 ? "a" : "b")

                let ended = try await waitForQueue(postgres, queue) { finished, open, total in
                    total == Self.files && open == 0 && finished == Self.files
                }
                #expect(ended, "round \(round): the queue did not end: \(services.map(\.logText))")
                for service in services { _ = await stop(service) }

                // Every file once, under its own name, with its bytes; no part file left.
                let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                #expect(entries.count == Self.files, "round \(round): \(entries.count) entries: \(entries.sorted())")
                for entry in entries {
                    #expect(!entry.hasPrefix("."), "round \(round): \(entry) left behind")
                    #expect(!entry.contains(" ("), "round \(round): \(entry) downloaded twice")
                    if let expected = contents["/r\(round)/" + entry] {
                        #expect(FileManager.default.contents(atPath: directory + "/" + entry) == expected, "\(entry)")
                    }
                }
                // nginx: complete responses beyond one a file come only from transfers the stop cut.
                let log = (try? String(contentsOfFile: accessLog, encoding: .utf8)) ?? ""
                var complete: [String: Int] = [:]
                for line in log.split(separator: "\n") where line.hasPrefix("/r\(round)/") {
                    let fields = line.split(separator: " ")
                    guard fields.count == 4, fields[1] == "200" || fields[1] == "206", fields[3] == "[OK]" else {
                        continue
                    }
                    complete[String(fields[0]), default: 0] += 1
                }
                let extra = complete.values.reduce(0) { $0 + max(0, $1 - 1) }
                #expect(
                    complete.count == Self.files, "round \(round): \(Self.files - complete.count) files never served")
                #expect(extra <= Self.slots, "round \(round): \(extra) complete fetches beyond one a file")
                extraFetches += extra
            }
            print(
                "fleet stops: seed \(seed), \(rounds) rounds of \(Self.files) downloads, longest stop \(longestStop),"
                    + " \(extraFetches) complete fetches of transfers cut by a stop")
        }

        /// Polls the queue's counts every 100 ms until `done` says so; false after 120 s (a hang
        /// guard: nothing here is timed).
        private func waitForQueue(
            _ postgres: PostgresServer, _ queue: String, done: (_ finished: Int, _ open: Int, _ total: Int) -> Bool
        ) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(120)
            while ContinuousClock.now < deadline {
                let counts = try await postgres.psql(
                    "SELECT count(*) FILTER (WHERE state = 'finished'),"
                        + " count(*) FILTER (WHERE state IN ('pending', 'downloading')), count(*)"
                        + " FROM peregrine_tasks WHERE store = '\(queue)'", database: "fleet")
                let numbers = counts.split(separator: "|").compactMap { Int($0) }
                if numbers.count == 3, done(numbers[0], numbers[1], numbers[2]) { return true }
                try await Task.sleep(for: .milliseconds(100))
            }
            return false
        }
    }
}
