import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `peregrined --store postgresql://…` as processes: several services share one queue in a real
/// PostgreSQL (issue 20), download from a real nginx, and one of them is killed with SIGKILL.
@Suite(.serialized) struct FleetDaemonTests {
    static var peregrined: String? { ChildProcess.builtProduct(named: "peregrined") }

    static let queue = "fleet"
    static let services = 4
    static let fileCount = 400
    /// Tasks each service holds at once: also the most a killed service can have been holding.
    static let slots = 5
    /// Connections to the one origin at once across the fleet (`--fleet-max-connections-per-origin`):
    /// fewer than the services' slots together, so the limit binds.
    static let originCap = 15
    /// The files of the batch added half way, through the victim alone.
    static let killBatch = (fileCount / 2)..<(fileCount / 2 + 25)

    /// Four services, 400 files added through the RPC of all of them, one service killed with
    /// SIGKILL while it holds tasks. Every file arrives byte for byte, none is lost, and nginx's access
    /// log shows what "once" means with a take-over:
    /// - a task claimed once (never taken over) was requested exactly once, a complete 200;
    /// - a task taken over (claimed more than once) was fetched to completion at least once and
    ///   at most once per claim: the dead service may have completed its transfer before it
    ///   could record the end in the queue, and that copy is orphaned in its directory;
    /// - so across the fleet, complete fetches beyond one per task are at most what the dead
    ///   service could hold (`slots`).
    ///
    /// The services share a limit of 15 connections to the origin (their slots add up to 20);
    /// nginx refuses with 503 any request over 15 at once (`limit_conn`), and no request of the
    /// log may have been refused.
    @Test func fourServicesDownloadEveryFileOnceThroughAKill() async throws {
        let tool = try #require(Self.peregrined, "no peregrined beside the tests: build with --build-tests")
        let seed = SeededRandom.seeds(from: "PEREGRINE_FLEET_SEED", defaults: [2611])[0]
        var random = SeededRandom(seed: seed)
        let scratch = try TemporaryDirectory(prefix: "fleet-daemons")
        defer { scratch.remove() }

        let clock = ContinuousClock()
        let began = clock.now
        func phase(_ name: String) { print("fleet: \(name) at \(clock.now - began)") }
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        try await postgres.start()
        try await postgres.createDatabase("fleet")
        let connectionString = postgres.connectionString(database: "fleet")

        // Slow enough that every service holds transfers in flight when one is killed (nginx
        // sends a second's worth at once, then the rest at the next whole seconds: a file over
        // 32 KiB, one in four here, takes one second more); the log says whether each request
        // completed.
        let accessLog = scratch.path("access.log")
        let nginx = try NginxServer(
            NginxServer.Configuration(
                limitRate: 32_768,
                extraDirectives: ["access_log \(accessLog) fleet;", "limit_conn fleet \(Self.originCap);"],
                httpDirectives: [
                    "log_format fleet '$request_uri $status $body_bytes_sent \"$http_range\" [$request_completion]';",
                    "limit_conn_zone $server_port zone=fleet:1m;",
                ]))
        defer { nginx.stop() }
        var contents: [String: Data] = [:]
        var sizes: [String: Int] = [:]
        try FileManager.default.createDirectory(
            atPath: nginx.documentPath("/fleet"), withIntermediateDirectories: true)
        for index in 0..<Self.fileCount {
            let name = String(format: "f%03d.bin", index)
            // The batch added half way, which the victim claims and is killed holding, takes four
            // to six seconds a file: longer than the `psql` that sees it held may take to answer
            // on a loaded machine, so that the kill still finds it unfinished.
            let slow = Self.killBatch.contains(index)
            let count = Int.random(in: slow ? 131_072...196_608 : 8_192...40_960, using: &random)
            let file = nginx.documentPath("/fleet/" + name)
            let data = Data(random.bytes(count))
            try data.write(to: URL(fileURLWithPath: file))
            contents[name] = data
            sizes["/fleet/" + name] = count
        }
        try await nginx.start()
        phase("servers started")

        var daemons: [DaemonProcess] = []
        defer { for daemon in daemons { daemon.stop() } }
        for index in 0..<Self.services {
            daemons.append(
                try await DaemonProcess(
                    tool,
                    [
                        "--dir", scratch.path("downloads-\(index)"), "--state", scratch.path("state-\(index)"),
                        "--rpc-listen-port", "{port}", "--queue", Self.queue, "--lease", "3",
                        "--fleet-slots", String(Self.slots),
                        "--fleet-max-connections-per-origin", String(Self.originCap),
                    ], log: scratch.path("daemon-\(index).log"),
                    // From the environment, so that the password is on no command line.
                    environment: ["PEREGRINE_STORE": connectionString]))
        }
        phase("services started")
        let victim = 1
        let victimPID = daemons[victim].process.processIdentifier

        // 400 additions through all four services, 25 to a call, interleaved. Half way, once the
        // first half has ended, the others are stopped (SIGSTOP: they hold no lease then) while the
        // victim takes the next batch alone; it is killed with SIGKILL as soon as it holds leases,
        // the others go on, and the rest goes through the survivors. (Left to chance, the victim
        // may hold nothing at that moment: the services that hold the origin's connections claim
        // again what their ended tasks free.)
        var gids: [(service: Int, gid: String, name: String)] = []
        let names = (0..<Self.fileCount).map { String(format: "f%03d.bin", $0) }
        let survivors = (0..<Self.services).filter { $0 != victim }
        var killed = false
        for (batch, start) in stride(from: 0, to: names.count, by: 25).enumerated() {
            var service = batch % Self.services
            let killBatch = start == Self.killBatch.lowerBound
            if killBatch {
                try await waitForQueue(postgres, "the end of the first half") { _, open, _ in open == 0 }
                for index in survivors { kill(daemons[index].process.processIdentifier, SIGSTOP) }
                service = victim
            } else if killed, service == victim {
                service = (victim + 1) % Self.services
            }
            let chunk = Array(names[start..<min(start + 25, names.count)])
            let calls = chunk.map {
                "{\"methodName\":\"aria2.addUri\",\"params\":[[\"\(nginx.httpURL("/fleet/" + $0))\"]]}"
            }
            let response = try await daemons[service].call("system.multicall", "[\(calls.joined(separator: ","))]")
            let results = try #require(response["result"] as? [Any], "\(response)")
            for (name, result) in zip(chunk, results) {
                let gid = try #require((result as? [Any])?.first as? String, "addUri of \(name): \(result)")
                gids.append((service, gid, name))
            }
            if killBatch {
                try await waitForQueue(postgres, "the kill") { _, _, _ in
                    let held = try await postgres.psql(
                        "SELECT count(*) FROM peregrine_tasks WHERE store = '\(Self.queue)' AND state = 'downloading'"
                            + " AND lease_owner LIKE '%:\(victimPID):%'", database: "fleet")
                    guard held != "0" else { return false }
                    await daemons[victim].signal(SIGKILL)
                    killed = true
                    return true
                }
                for index in survivors { kill(daemons[index].process.processIdentifier, SIGCONT) }
                phase("victim killed")
            }
        }
        try await waitForQueue(postgres, "the end") { _, open, total in total == Self.fileCount && open == 0 }

        phase("every task ended")
        // Every task finished in the queue, none lost.
        let rows = try await postgres.psql(
            "SELECT url, state, claims FROM peregrine_tasks WHERE store = '\(Self.queue)'", database: "fleet")
        var claims: [String: Int] = [:]
        for line in rows.split(separator: "\n") {
            let fields = line.split(separator: "|").map(String.init)
            try #require(fields.count == 3, "\(line)")
            #expect(fields[1] == "finished", "\(fields[0]) ended \(fields[1])")
            claims[String(fields[0].drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" })] = Int(fields[2])
        }
        #expect(claims.count == Self.fileCount)
        let takenOver = claims.filter { $0.value > 1 }
        #expect(!takenOver.isEmpty, "the victim held tasks; another service must have taken them over")
        print("fleet: seed \(seed), \(takenOver.count) tasks taken over from pid \(victimPID)")
        // Each take-over is a line of the log of the service that took the task over.
        let tookOver = survivors.map { daemons[$0].logText.components(separatedBy: "took over").count - 1 }.reduce(0, +)
        #expect(tookOver >= takenOver.count, "\(tookOver) take-over lines for \(takenOver.count) tasks taken over")

        // The adding service answers for what it added, wherever it was downloaded.
        for (service, batch) in Dictionary(grouping: gids, by: \.service) where service != victim {
            let calls = batch.map { "{\"methodName\":\"aria2.tellStatus\",\"params\":[\"\($0.gid)\",[\"status\"]]}" }
            let response = try await daemons[service].call("system.multicall", "[\(calls.joined(separator: ","))]")
            let results = try #require(response["result"] as? [Any], "\(response)")
            for (added, result) in zip(batch, results) {
                let status = ((result as? [Any])?.first as? [String: Any])?["status"] as? String
                #expect(status == "complete", "\(added.name) on service \(service): \(result)")
            }
        }

        // The service that downloaded a file answers for the adder's GID too (one GID per task
        // across the fleet).
        let gidByName = Dictionary(gids.map { ($0.name, $0.gid) }, uniquingKeysWith: { first, _ in first })
        for service in 0..<Self.services where service != victim {
            let directory = scratch.path("downloads-\(service)")
            let held = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
                gidByName[$0] != nil
            }
            guard !held.isEmpty else { continue }
            let calls = held.map {
                "{\"methodName\":\"aria2.tellStatus\",\"params\":[\"\(gidByName[$0]!)\",[\"status\",\"dir\"]]}"
            }
            let response = try await daemons[service].call("system.multicall", "[\(calls.joined(separator: ","))]")
            let results = try #require(response["result"] as? [Any], "\(response)")
            for (name, result) in zip(held, results) {
                let object = (result as? [Any])?.first as? [String: Any]
                #expect(object?["status"] as? String == "complete", "\(name) on its downloader \(service): \(result)")
                #expect(object?["dir"] as? String == directory, "\(name) on its downloader \(service): \(result)")
            }
        }

        // A service that neither added a file nor downloaded it finds its GID in the queue.
        var bystanders: [Int: [(gid: String, name: String)]] = [:]
        for added in gids {
            let holders = (0..<Self.services).filter {
                FileManager.default.fileExists(atPath: scratch.path("downloads-\($0)") + "/" + added.name)
            }
            guard
                let bystander = (0..<Self.services).first(where: {
                    $0 != victim && $0 != added.service && !holders.contains($0)
                })
            else { continue }
            bystanders[bystander, default: []].append((added.gid, added.name))
        }
        #expect(!bystanders.isEmpty)
        for (service, batch) in bystanders {
            let calls = batch.map {
                "{\"methodName\":\"aria2.tellStatus\",\"params\":[\"\($0.gid)\",[\"gid\",\"status\"]]}"
            }
            let response = try await daemons[service].call("system.multicall", "[\(calls.joined(separator: ","))]")
            let results = try #require(response["result"] as? [Any], "\(response)")
            for (asked, result) in zip(batch, results) {
                let object = (result as? [Any])?.first as? [String: Any]
                #expect(object?["status"] as? String == "complete", "\(asked.name) on bystander \(service): \(result)")
                #expect(object?["gid"] as? String == asked.gid, "\(asked.name) on bystander \(service): \(result)")
            }
        }

        // Graceful stops of the survivors.
        for (index, daemon) in daemons.enumerated() where index != victim {
            #expect(await daemon.signal(SIGTERM) == 0, "\(daemon.logText)")
        }

        // Every file right, in the directory of whoever downloaded it; none twice in one.
        var found: [String: Int] = [:]
        for index in 0..<Self.services {
            let directory = scratch.path("downloads-\(index)")
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                #expect(!entry.contains(" ("), "\(entry) downloaded twice into \(directory)")
                guard let expected = contents[entry] else { continue }
                #expect(
                    FileManager.default.contents(atPath: directory + "/" + entry) == expected,
                    "\(entry) in \(directory)")
                found[entry, default: 0] += 1
            }
        }
        for name in names { #expect(found[name, default: 0] >= 1, "\(name) is in no download directory") }

        // nginx: what "once" means (see above).
        let log = try String(contentsOfFile: accessLog, encoding: .utf8)
        var requests: [String: [(status: Int, bytes: Int, range: String, complete: Bool)]] = [:]
        for line in log.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            try #require(fields.count == 5, "\(line)")
            requests[fields[0], default: []].append(
                (Int(fields[1]) ?? 0, Int(fields[2]) ?? -1, fields[3], fields[4] == "[OK]"))
        }
        let refused = requests.flatMap { path, all in all.filter { $0.status == 503 }.map { _ in path } }
        #expect(refused.isEmpty, "over \(Self.originCap) connections at once: nginx refused \(refused)")
        var extra = 0
        for name in names {
            let path = "/fleet/" + name
            let size = try #require(sizes[path])
            let all = requests[path] ?? []
            let complete = all.filter { request in
                guard request.complete else { return false }
                if request.status == 200 { return request.bytes == size }
                // A 206 completes a partial file when its range runs to the end.
                guard request.status == 206, request.range.hasPrefix("\"bytes="), request.range.hasSuffix("-\"")
                else { return false }
                let first = Int(request.range.dropFirst(7).dropLast(2)) ?? -1
                return first >= 0 && request.bytes == size - first
            }
            let claimed = try #require(claims[path], "\(path) not in the queue")
            if claimed == 1 {
                #expect(all.count == 1 && complete.count == 1, "\(path), claimed once, was requested \(all)")
            } else {
                #expect(
                    complete.count >= 1 && complete.count <= claimed,
                    "\(path), claimed \(claimed) times, was requested \(all)")
            }
            extra += max(0, complete.count - 1)
        }
        #expect(extra <= Self.slots, "\(extra) complete fetches beyond one per file")

        // The connection string's password appears in no log.
        for index in 0..<Self.services {
            let text = daemons[index].logText
            #expect(
                !text.contains(postgres.password) && !text.contains("s3cret"), "service \(index) logged the password")
        }
    }

    /// Two services sharing one download directory: the first is killed with SIGKILL while it
    /// downloads a file it has recorded progress of; the second, started afterwards, claims the
    /// task once the lease ran out and continues the dead service's partial file with a `Range`
    /// request from the recorded offset (a 206 in nginx's log) rather than from zero, with the
    /// request header the download was added with, and the file is right byte for byte.
    @Test func aTaskTakenOverContinuesTheDeadServicesPartialFile() async throws {
        let tool = try #require(Self.peregrined, "no peregrined beside the tests: build with --build-tests")
        let scratch = try TemporaryDirectory(prefix: "fleet-takeover")
        defer { scratch.remove() }
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        try await postgres.start()
        try await postgres.createDatabase("takeover")
        let connectionString = postgres.connectionString(database: "takeover")
        let accessLog = scratch.path("access.log")
        // 128 KiB a second: the 1.5 MiB file takes about 12 seconds.
        let nginx = try NginxServer(
            NginxServer.Configuration(
                limitRate: 131_072, extraDirectives: ["access_log \(accessLog) takeover;"],
                httpDirectives: [
                    "log_format takeover '$request_uri $status $body_bytes_sent \"$http_range\" [$request_completion]"
                        + " $http_x_fleet';"
                ]))
        defer { nginx.stop() }
        var random = SeededRandom(seed: 2711)
        let size = 1_536 * 1024
        let content = Data(random.bytes(size))
        try content.write(to: URL(fileURLWithPath: nginx.documentPath("/big.bin")))
        try await nginx.start()

        let shared = scratch.path("downloads")
        func service(_ name: String) async throws -> DaemonProcess {
            try await DaemonProcess(
                tool,
                [
                    "--dir", shared, "--state", scratch.path("state-\(name)"), "--rpc-listen-port", "{port}",
                    "--queue", "takeover", "--lease", "3", "--fleet-slots", "2",
                ], log: scratch.path("daemon-\(name).log"), environment: ["PEREGRINE_STORE": connectionString])
        }
        let first = try await service("first")
        defer { first.stop() }
        // A request header the queue carries to whichever service downloads the file.
        let added = try await first.call(
            "aria2.addUri", "[\"\(nginx.httpURL("/big.bin"))\"], {\"header\": [\"X-Fleet: carried\"]}")
        let gid = try #require(added["result"] as? String, "\(added)")

        // Killed once the queue holds a quarter of the file as its progress.
        let firstPID = first.process.processIdentifier
        var recorded = 0
        let deadline = ContinuousClock.now + .seconds(90)
        while recorded < size / 4 {
            let row = try await postgres.psql(
                "SELECT received_length FROM peregrine_tasks WHERE store = 'takeover'"
                    + " AND lease_owner LIKE '%:\(firstPID):%'", database: "takeover")
            recorded = Int(row) ?? 0
            guard ContinuousClock.now < deadline else {
                Issue.record("the first service recorded no progress: \(first.logText)")
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        await first.signal(SIGKILL)
        let second = try await service("second")
        defer { second.stop() }

        // The second service takes it over and finishes it.
        while try await postgres.psql(
            "SELECT state FROM peregrine_tasks WHERE store = 'takeover'", database: "takeover") != "finished"
        {
            guard ContinuousClock.now < deadline else {
                Issue.record("the task did not finish: \(second.logText)")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(FileManager.default.contents(atPath: shared + "/big.bin") == content)
        let entries = try FileManager.default.contentsOfDirectory(atPath: shared)
        #expect(entries.filter { !$0.hasPrefix(".") } == ["big.bin"], "\(entries)")
        let status = try await second.call("aria2.tellStatus", "\"\(gid)\", [\"status\"]")
        #expect((status["result"] as? [String: Any])?["status"] as? String == "complete", "\(status)")

        // nginx: the first request from zero, cut by the kill; then one 206 from an offset at or
        // after a quarter of the file (what the heir found recorded), running to the end.
        let lines = try String(contentsOfFile: accessLog, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: " ").map(String.init)
        }
        try #require(lines.count == 2 && lines.allSatisfy { $0.count == 6 }, "\(lines)")
        #expect(lines.allSatisfy { $0[5] == "carried" }, "the heir did not send the header: \(lines)")
        #expect(lines[0][1] == "200" && lines[0][4] != "[OK]", "\(lines[0])")
        #expect(lines[1][1] == "206" && lines[1][4] == "[OK]", "\(lines[1])")
        let offset = Int(lines[1][3].dropFirst(7).dropLast(2)) ?? -1
        #expect(offset >= size / 4 && offset < size, "\(lines[1])")
        #expect(Int(lines[1][2]) == size - offset, "\(lines[1])")
        #expect(await second.signal(SIGTERM) == 0, "\(second.logText)")
    }

    /// `peregrine add|ls|pause|resume|rm` work the same against either service of a fleet:
    /// what is added through one is listed, paused, resumed and removed through the other, and
    /// a file downloaded by either is listed complete by both.
    @Test func theCommandLineWorksAgainstAnyServiceOfTheFleet() async throws {
        let tool = try #require(Self.peregrined, "no peregrined beside the tests: build with --build-tests")
        let client = try #require(
            DaemonTests.peregrine, "no peregrine binary beside the tests: build with --build-tests")
        let postgres = try PostgresServer()
        defer { postgres.stop() }
        try await postgres.start()
        try await postgres.createDatabase("cli")
        let (nginx, scratch) = try await ServiceRig.makeServer()
        defer {
            nginx.stop()
            scratch.remove()
        }
        var random = SeededRandom(seed: 2811)
        try Data(random.bytes(90_001)).write(to: URL(fileURLWithPath: nginx.documentPath("/c.bin")))
        try FileManager.default.createDirectory(atPath: nginx.documentPath("/slow"), withIntermediateDirectories: true)
        try Data(random.bytes(24 << 20)).write(to: URL(fileURLWithPath: nginx.documentPath("/slow/s.bin")))
        let secret = "cli-\(UInt32.random(in: 0...UInt32.max))"
        func service(_ name: String) async throws -> DaemonProcess {
            try await DaemonProcess(
                tool,
                [
                    "--dir", scratch.path("downloads-\(name)"), "--state", scratch.path("state-\(name)"),
                    "--rpc-listen-port", "{port}", "--queue", "cli", "--lease", "3", "--fleet-slots", "2",
                ], log: scratch.path("daemon-\(name).log"),
                environment: [
                    "PEREGRINE_STORE": postgres.connectionString(database: "cli"), "PEREGRINE_RPC_SECRET": secret,
                ])
        }
        let first = try await service("first")
        defer { first.stop() }
        let second = try await service("second")
        defer { second.stop() }
        func peregrine(_ arguments: [String], on daemon: DaemonProcess) async throws -> ChildProcess.Output {
            try await ChildProcess.run(
                client, arguments + ["--rpc", "http://127.0.0.1:\(daemon.port)/jsonrpc"],
                environment: ["PEREGRINE_RPC_SECRET": secret], allowFailure: true)
        }
        /// `peregrine ls --json` of a service, by GID.
        func listed(on daemon: DaemonProcess) async throws -> [String: [String: Any]] {
            let output = try await peregrine(["ls", "--json"], on: daemon)
            #expect(output.status == 0, "\(output.errorText)")
            var lines: [String: [String: Any]] = [:]
            for line in output.text.split(separator: "\n") {
                if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let gid = object["gid"] as? String
                {
                    lines[gid] = object
                }
            }
            return lines
        }
        func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if try await condition() { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("timed out waiting until \(what)")
        }

        let small = try await peregrine(["add", nginx.httpURL("/c.bin")], on: first)
        let smallGID = small.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(small.status == 0 && smallGID.count == 16, "\(small.text) \(small.errorText)")
        let slow = try await peregrine(["add", nginx.httpURL("/slow/s.bin")], on: second)
        let slowGID = slow.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(slow.status == 0 && slowGID.count == 16, "\(slow.text) \(slow.errorText)")

        try await eventually("both services list the small file complete") {
            let one = try await listed(on: first)[smallGID]?["status"] as? String
            let two = try await listed(on: second)[smallGID]?["status"] as? String
            return one == "complete" && two == "complete"
        }
        try await eventually("the first service lists the slow one active") {
            try await listed(on: first)[slowGID]?["status"] as? String == "active"
        }
        let paused = try await peregrine(["pause", slowGID], on: first)
        #expect(paused.status == 0 && paused.text == "paused \(slowGID)\n", "\(paused.errorText)")
        try await eventually("the second service lists it paused") {
            try await listed(on: second)[slowGID]?["status"] as? String == "paused"
        }
        let resumed = try await peregrine(["resume", slowGID], on: second)
        #expect(resumed.status == 0, "\(resumed.errorText)")
        try await eventually("the first service lists it active again") {
            try await listed(on: first)[slowGID]?["status"] as? String == "active"
        }
        let removed = try await peregrine(["rm", slowGID, smallGID], on: first)
        #expect(removed.status == 0, "\(removed.errorText)")
        try await eventually("neither service lists either download") {
            let one = try await listed(on: first)
            let two = try await listed(on: second)
            return one[slowGID] == nil && two[slowGID] == nil && one[smallGID] == nil && two[smallGID] == nil
        }
        #expect(
            try await postgres.psql("SELECT count(*) FROM peregrine_tasks WHERE store = 'cli'", database: "cli") == "0")
    }

    /// A database that is down at start: one line on standard error naming the connection
    /// string with its password redacted, and a non-zero exit.
    @Test func aDatabaseThatIsDownAtStartIsOneRedactedLine() async throws {
        let tool = try #require(Self.peregrined, "no peregrined beside the tests: build with --build-tests")
        let scratch = try TemporaryDirectory(prefix: "fleet-down")
        defer { scratch.remove() }
        let port = try FreePort.pick()
        let secret = "hunter2-\(UInt32.random(in: 0...UInt32.max))"
        let result = try await ChildProcess.run(
            tool,
            [
                "--dir", scratch.path("downloads"), "--state", scratch.path("state"), "--rpc-listen-port", "0",
                "--store", "postgresql://peregrine:\(secret)@127.0.0.1:\(port)/fleet",
            ], allowFailure: true)
        #expect(result.status != 0)
        let lines = result.errorText.split(separator: "\n")
        #expect(lines.count == 1, "\(result.errorText)")
        #expect(result.errorText.contains("postgresql://peregrine:***@127.0.0.1:\(port)/fleet"), "\(result.errorText)")
        #expect(!result.errorText.contains(secret) && !result.text.contains(secret), "\(result.errorText)")
    }

    /// Polls the queue's counts every 100 ms until `done` says so; fails after 90 s (a hang
    /// guard: nothing here is timed).
    private func waitForQueue(
        _ postgres: PostgresServer, _ what: String,
        done: (_ finished: Int, _ open: Int, _ total: Int) async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(90)
        while true {
            let counts = try await postgres.psql(
                "SELECT count(*) FILTER (WHERE state = 'finished'),"
                    + " count(*) FILTER (WHERE state IN ('pending', 'downloading')), count(*)"
                    + " FROM peregrine_tasks WHERE store = '\(Self.queue)'", database: "fleet")
            let numbers = counts.split(separator: "|").compactMap { Int($0) }
            if numbers.count == 3, try await done(numbers[0], numbers[1], numbers[2]) {
                return
            }
            guard ContinuousClock.now < deadline else {
                Issue.record("the fleet did not get to \(what): \(counts)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
