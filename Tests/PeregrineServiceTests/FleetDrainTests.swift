import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Nested in FleetDaemonTests, whose suites of processes run one at a time.
extension FleetDaemonTests {
    /// `peregrined --drain-timeout`: SIGTERM lets the running downloads finish, hands back those
    /// it has not started at once and the rest, with their synced bytes, at the end of the period;
    /// a second SIGTERM stops at once.
    ///
    /// nginx serves `/quick/` files slowly enough to be running at the SIGTERM (about two seconds
    /// each, far within the drain) and `/slow/` files at a rate they cannot finish at during the
    /// drain; a request with a `Range` (a resumption) is served at full speed, so the service that
    /// takes them over finishes them at once. The hang guards are far above what each step takes.
    @Suite(.serialized) struct FleetDrainTests {
        static let quick = 8
        static let slow = 3
        static let quickSize = 96 * 1024
        static let slowSize = 4 * 1024 * 1024
        static let slots = 8

        struct Setup {
            let tool: String
            let scratch: TemporaryDirectory
            let postgres: PostgresServer
            let nginx: NginxServer
            let accessLog: String
            let connectionString: String
            var contents: [String: Data]
        }

        private func setUp(_ name: String) async throws -> Setup {
            let tool = try #require(
                ChildProcess.builtProduct(named: "peregrined"),
                "no peregrined beside the tests: build with --build-tests")
            let scratch = try TemporaryDirectory(prefix: name)
            let postgres = try PostgresServer()
            try await postgres.start()
            try await postgres.createDatabase("fleet")
            let accessLog = scratch.path("access.log")
            let nginx = try NginxServer(
                NginxServer.Configuration(
                    extraDirectives: [
                        "access_log \(accessLog) drain;",
                        "location /quick/ { limit_rate 48k; }",
                        "location /slow/ { limit_rate $drain_rate; }",
                    ],
                    httpDirectives: [
                        "log_format drain '$request_uri $status $body_bytes_sent \"$http_range\" [$request_completion]';",
                        // A first request is slow; a resumption (with a Range) is not.
                        "map $http_range $drain_rate { \"\" 16k; default 0; }",
                    ]))
            var random = SeededRandom(seed: 7919)
            var contents: [String: Data] = [:]
            for folder in ["quick", "slow"] {
                try FileManager.default.createDirectory(
                    atPath: nginx.documentPath("/\(folder)"), withIntermediateDirectories: true)
            }
            for index in 0..<Self.quick {
                contents["/quick/q\(index).bin"] = Data(random.bytes(Self.quickSize))
            }
            for index in 0..<Self.slow {
                contents["/slow/s\(index).bin"] = Data(random.bytes(Self.slowSize))
            }
            for (path, data) in contents { try data.write(to: URL(fileURLWithPath: nginx.documentPath(path))) }
            try await nginx.start()
            return Setup(
                tool: tool, scratch: scratch, postgres: postgres, nginx: nginx, accessLog: accessLog,
                connectionString: postgres.connectionString(database: "fleet"), contents: contents)
        }

        private func start(_ setup: Setup, _ name: String, queue: String, _ extra: [String] = []) async throws
            -> DaemonProcess
        {
            try await DaemonProcess(
                setup.tool,
                [
                    "--dir", setup.scratch.path("downloads-\(queue)"), "--state", setup.scratch.path("state-\(name)"),
                    "--rpc-listen-port", "{port}", "--queue", queue, "--lease", "20", "--fleet-slots",
                    String(Self.slots),
                ] + extra, log: setup.scratch.path("daemon-\(name).log"),
                environment: ["PEREGRINE_STORE": setup.connectionString])
        }

        /// Adds the downloads; returns their GIDs, by path.
        @discardableResult
        private func add(_ paths: [String], to daemon: DaemonProcess, _ setup: Setup) async throws -> [String: String] {
            let calls = paths.map { "{\"methodName\":\"aria2.addUri\",\"params\":[[\"\(setup.nginx.httpURL($0))\"]]}" }
            let answer = try await daemon.call("system.multicall", "[\(calls.joined(separator: ","))]")
            let gids = (answer["result"] as? [[String]])?.compactMap(\.first) ?? []
            try #require(gids.count == calls.count, "\(answer)")
            return Dictionary(uniqueKeysWithValues: zip(paths, gids))
        }

        /// Polls `done` every 100 ms; false after `bound` (a hang guard).
        private func eventually(_ bound: Duration = .seconds(120), _ done: () async throws -> Bool) async throws
            -> Bool
        {
            let deadline = ContinuousClock.now + bound
            while ContinuousClock.now < deadline {
                if try await done() { return true }
                try await Task.sleep(for: .milliseconds(100))
            }
            return false
        }

        /// The downloads of `daemon` now downloading with some bytes received, by URL path.
        private func receiving(_ daemon: DaemonProcess) async throws -> Set<String> {
            let answer = try await daemon.call("aria2.tellActive", "[\"files\",\"completedLength\"]")
            var paths: Set<String> = []
            for status in answer["result"] as? [[String: Any]] ?? [] {
                guard let completed = (status["completedLength"] as? String).flatMap(Int.init), completed > 0,
                    let files = status["files"] as? [[String: Any]],
                    let uris = files.first?["uris"] as? [[String: Any]],
                    let uri = uris.first?["uri"] as? String, let url = URL(string: uri)
                else { continue }
                paths.insert(url.path)
            }
            return paths
        }

        private func waitUntilExit(_ daemon: DaemonProcess, within bound: Duration) async -> Bool {
            let process = daemon.process
            return
                (try? await onOwnThread { () -> Bool in
                    let deadline = Date().addingTimeInterval(Double(bound.components.seconds))
                    while process.isRunning, Date() < deadline { usleep(5_000) }
                    return !process.isRunning
                }) ?? false
        }

        private func counts(_ setup: Setup, _ queue: String) async throws -> (finished: Int, total: Int) {
            let counts = try await setup.postgres.psql(
                "SELECT count(*) FILTER (WHERE state = 'finished'), count(*) FROM peregrine_tasks"
                    + " WHERE store = '\(queue)'", database: "fleet")
            let numbers = counts.split(separator: "|").compactMap { Int($0) }
            return numbers.count == 2 ? (numbers[0], numbers[1]) : (-1, -1)
        }

        /// nginx's log lines of `path`: status, bytes sent, the Range asked for, whether complete.
        private func requests(of path: String, _ setup: Setup) -> [(status: Int, bytes: Int, range: String, ok: Bool)] {
            let log = (try? String(contentsOfFile: setup.accessLog, encoding: .utf8)) ?? ""
            return log.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ")
                guard fields.count == 5, fields[0] == path, let status = Int(fields[1]), let bytes = Int(fields[2])
                else { return nil }
                return (status, bytes, fields[3].trimmingCharacters(in: ["\""]), fields[4] == "[OK]")
            }
        }

        @Test func aDrainFinishesTheRunningHandsBackTheRestAndFetchesNothingTwice() async throws {
            let setup = try await setUp("fleet-drain")
            defer {
                setup.nginx.stop()
                setup.postgres.stop()
                setup.scratch.remove()
            }
            let queue = "drain"
            let drainer = try await start(setup, "a", queue: queue, ["--drain-timeout", "20"])
            defer { drainer.stop() }
            // Running at the SIGTERM: the quick ones and the slow ones (slots 8: 5 + 3); claimed
            // ahead and waiting: the other quick ones (the service claims as many again).
            let quickPaths = (0..<Self.quick).map { "/quick/q\($0).bin" }
            let slowPaths = (0..<Self.slow).map { "/slow/s\($0).bin" }
            let running = Array(quickPaths.prefix(Self.slots - Self.slow)) + slowPaths
            var gids = try await add(running, to: drainer, setup)
            gids.merge(try await add(Array(quickPaths.dropFirst(Self.slots - Self.slow)), to: drainer, setup)) { $1 }
            let started = try await eventually { try await receiving(drainer) == Set(running) }
            try #require(started, "the downloads did not all start: \(drainer.logText)")

            kill(drainer.process.processIdentifier, SIGTERM)
            let taker = try await start(setup, "b", queue: queue)
            defer { taker.stop() }
            // The drain ends at its period (the slow ones cannot finish), then the service stops.
            let ended = await waitUntilExit(drainer, within: .seconds(120))
            try #require(ended, "the draining service did not end: \(drainer.logText)")
            #expect(drainer.process.terminationStatus == 0, "\(drainer.logText)")
            let done = try await eventually {
                let counts = try await counts(setup, queue)
                return counts.finished == Self.quick + Self.slow && counts.total == Self.quick + Self.slow
            }
            #expect(done, "the queue did not end: \(drainer.logText) \(taker.logText)")
            #expect(drainer.logText.contains("draining"), "\(drainer.logText)")
            #expect(drainer.logText.contains("handed back the tasks not started here"), "\(drainer.logText)")
            // A line for each claim and each task handed back, with the GID the clients know.
            let lines = drainer.logText.split(separator: "\n")
            for (path, gid) in gids {
                let claimed = lines.filter { $0.hasSuffix("] claimed") && $0.contains("gid=\(gid)") }
                #expect(claimed.count == 1 && claimed[0].contains(path), "\(path) \(gid): \(drainer.logText)")
            }
            let handedBack = lines.filter { $0.hasSuffix("] handed back") }
            let expectedBack = quickPaths.dropFirst(Self.slots - Self.slow) + slowPaths
            #expect(handedBack.count == expectedBack.count, "\(drainer.logText)")
            for path in expectedBack {
                #expect(handedBack.contains { $0.contains("gid=\(gids[path]!)") && $0.contains(path) }, "\(path)")
            }

            // The service that took over counts what it did in /metrics: its claims (the three
            // handed back at once, the three at the end of the drain) and their ends, and the
            // time of its calls to the database.
            let handedOver = Double(Self.quick - (Self.slots - Self.slow) + Self.slow)
            var metrics: [String: Double] = [:]
            // The counter moves once the queue's commit returned, just after the queue shows it.
            _ = try await eventually {
                metrics = try await MetricsTests.samples(try await MetricsTests.get(taker.port, "/metrics").body)
                return metrics["peregrine_fleet_ended_total"] == handedOver
            }
            #expect(metrics["peregrine_fleet_ended_total"] == handedOver, "\(metrics)")
            #expect(metrics["peregrine_fleet_claims_total"] == handedOver, "\(metrics)")
            #expect(metrics["peregrine_fleet_take_overs_total"] == 0, "\(metrics)")
            for call in ["claim", "finish"] {
                #expect(
                    (metrics["peregrine_fleet_queue_call_seconds_count{call=\"\(call)\"}"] ?? 0) > 0, "\(metrics)")
            }

            // Every file once, with its bytes; no part file left.
            let directory = setup.scratch.path("downloads-\(queue)")
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            #expect(Set(entries) == Set(setup.contents.keys.map { ($0 as NSString).lastPathComponent }), "\(entries)")
            for (path, data) in setup.contents {
                let name = (path as NSString).lastPathComponent
                #expect(FileManager.default.contents(atPath: directory + "/" + name) == data, "\(name)")
            }
            // The quick ones, running or waiting at the SIGTERM: served once, whole.
            for path in quickPaths {
                let served = requests(of: path, setup)
                #expect(served.count == 1 && served[0].ok && served[0].range == "-", "\(path): \(served)")
            }
            // The slow ones: cut at the end of the drain, resumed by the other service from the
            // bytes the first had synced — nothing fetched twice beyond what was in flight.
            for path in slowPaths {
                let served = requests(of: path, setup)
                guard served.count == 2 else {
                    Issue.record("\(path): \(served)")
                    continue
                }
                #expect(!served[0].ok && served[0].range == "-", "\(path): \(served)")
                let offset = served[1].range.hasPrefix("bytes=") ? Int(served[1].range.dropFirst(6).dropLast()) : nil
                #expect(served[1].status == 206 && served[1].ok, "\(path): \(served)")
                #expect(
                    (offset ?? 0) > 0 && offset! <= served[0].bytes, "\(path) resumed from \(offset ?? -1): \(served)")
                #expect(served[0].bytes + served[1].bytes <= Self.slowSize + 64 * 1024, "\(path): \(served)")
            }
        }

        @Test func aSecondSIGTERMStopsADrainAtOnceAndHandsTheDownloadsBack() async throws {
            let setup = try await setUp("fleet-drain-again")
            defer {
                setup.nginx.stop()
                setup.postgres.stop()
                setup.scratch.remove()
            }
            let queue = "again"
            // A drain far longer than any hang guard here: only the second signal ends it.
            let daemon = try await start(setup, "a", queue: queue, ["--drain-timeout", "3600"])
            defer { daemon.stop() }
            let slowPaths = (0..<Self.slow).map { "/slow/s\($0).bin" }
            try await add(slowPaths, to: daemon, setup)
            let started = try await eventually { try await receiving(daemon) == Set(slowPaths) }
            try #require(started, "the downloads did not start: \(daemon.logText)")

            kill(daemon.process.processIdentifier, SIGTERM)
            // The service's own line, logged once the drain holds (not the signal's, just before).
            let draining = try await eventually { daemon.logText.contains("no download starts any more") }
            try #require(draining, "\(daemon.logText)")
            // Still serving while it drains, but no longer ready for new work.
            let ready = try await MetricsTests.get(daemon.port, "/readyz")
            #expect(ready.status == 503 && ready.body.contains("draining"), "\(ready)")
            kill(daemon.process.processIdentifier, SIGTERM)
            let ended = await waitUntilExit(daemon, within: .seconds(120))
            try #require(ended, "a second SIGTERM did not stop the drain: \(daemon.logText)")
            #expect(daemon.process.terminationStatus == 0, "\(daemon.logText)")
            #expect(daemon.logText.contains("stopping now"), "\(daemon.logText)")
            // Handed back with their synced bytes, for any service to resume.
            let rows = try await setup.postgres.psql(
                "SELECT state, received_length, lease_owner IS NULL FROM peregrine_tasks WHERE store = '\(queue)'",
                database: "fleet")
            let lines = rows.split(separator: "\n")
            #expect(lines.count == Self.slow, "\(rows)")
            for line in lines {
                let fields = line.split(separator: "|", omittingEmptySubsequences: false)
                #expect(fields.count == 3 && fields[0] == "pending" && fields[2] == "t", "\(rows)")
                #expect((fields.count == 3 ? Int(fields[1]) ?? 0 : 0) > 0, "\(rows)")
            }
        }
        @Test func aSingleServiceDrainsItsRunningDownloadsAndStartsNoOther() async throws {
            let setup = try await setUp("service-drain")
            defer {
                setup.nginx.stop()
                setup.postgres.stop()
                setup.scratch.remove()
            }
            let directory = setup.scratch.path("downloads-single")
            func start() async throws -> DaemonProcess {
                try await DaemonProcess(
                    setup.tool,
                    [
                        "--dir", directory, "--state", setup.scratch.path("state-single"), "--rpc-listen-port",
                        "{port}",
                        "--max-concurrent-downloads", "2", "--drain-timeout", "600",
                    ], log: setup.scratch.path("daemon-single.log"))
            }
            let paths = (0..<3).map { "/quick/q\($0).bin" }
            let daemon = try await start()
            defer { daemon.stop() }
            try await add(paths, to: daemon, setup)
            let started = try await eventually { try await receiving(daemon) == Set(paths.prefix(2)) }
            try #require(started, "the downloads did not start: \(daemon.logText)")
            kill(daemon.process.processIdentifier, SIGTERM)
            // The drain ends once the two running downloads finished, long before its period.
            let ended = await waitUntilExit(daemon, within: .seconds(120))
            try #require(ended, "the service did not end after its downloads: \(daemon.logText)")
            #expect(daemon.process.terminationStatus == 0, "\(daemon.logText)")
            for path in paths.prefix(2) {
                let name = (path as NSString).lastPathComponent
                #expect(FileManager.default.contents(atPath: directory + "/" + name) == setup.contents[path], "\(name)")
            }
            // The waiting one did not start: no request for it yet.
            #expect(requests(of: paths[2], setup).isEmpty, "\(requests(of: paths[2], setup))")

            // Started again, the service downloads it.
            let again = try await start()
            defer { again.stop() }
            let last = (paths[2] as NSString).lastPathComponent
            let done = try await eventually {
                FileManager.default.contents(atPath: directory + "/" + last) == setup.contents[paths[2]]
            }
            #expect(done, "\(again.logText)")
            for path in paths {
                let served = requests(of: path, setup)
                #expect(served.count == 1 && served[0].ok, "\(path): \(served)")
            }
            #expect(await again.signal(SIGTERM) == 0)
        }
    }
}
