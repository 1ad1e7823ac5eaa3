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
    /// One of two services cut off from PostgreSQL by a network that drops packets
    /// (`BlackholeProxy`: nothing is reset, so calls wait rather than fail) while it downloads
    /// small and large files into the directory both share. The cut-off service keeps answering
    /// its RPC clients (with an error or stale figures where the queue is needed), stops its
    /// transfers before its leases can expire, and hands over: the other service finishes
    /// every file once — the large ones from the bytes the cut-off service synced, the ones it
    /// placed but could not record through their second name — with no `(1)` copy, no part
    /// file, and nginx sending at most 1.3 times the files' bytes. Then the same with SIGTERM
    /// sent to the cut-off service: it ends while still cut off. And with both services cut off
    /// at once: both stop, and once the network forwards again they finish everything the same
    /// way. And with only the cut-off service's `LISTEN` connection dropped (a firewall that
    /// forgot one idle connection): it finds the connection silent, listens on a new one, and
    /// everything added meanwhile is downloaded once. Times are printed, not tested.
    @Suite(.serialized) struct FleetPartitionTests {
        static let smallFiles = 40
        static let smallSize = 32 << 10
        static let largeFiles = 3
        /// Files added while only the listening connection is cut off.
        static let lateFiles = 10
        static let largeSize = 3 << 20
        /// nginx's rate per connection: a large file takes 12 s.
        static let rate = 262_144
        /// The services' lease, in seconds: short, so that take-overs come soon.
        static let lease = 6
        /// How long the network drops the cut-off service's packets.
        static let partition = Duration.seconds(12)

        @Test func aServiceCutOffAnswersItsClientsStopsInTimeAndHandsOver() async throws {
            try await run(.oneCutOff)
        }

        @Test func aServiceCutOffEndsOnSIGTERMAndHandsOver() async throws {
            try await run(.oneTerminatedWhileCutOff)
        }

        @Test func twoServicesCutOffTogetherStopAndFinishOnceTheNetworkIsBack() async throws {
            try await run(.bothCutOff)
        }

        @Test func aServiceWhoseListeningConnectionIsCutOffListensAgain() async throws {
            try await run(.listenerCutOff)
        }

        enum Scenario {
            case oneCutOff, oneTerminatedWhileCutOff, bothCutOff, listenerCutOff
        }

        private func run(_ scenario: Scenario) async throws {
            let tool = try #require(
                ChildProcess.builtProduct(named: "peregrined"),
                "no peregrined beside the tests: build with --build-tests")
            let terminating = scenario == .oneTerminatedWhileCutOff
            let name: String
            switch scenario {
            case .oneCutOff: name = "cut"
            case .oneTerminatedWhileCutOff: name = "cutterm"
            case .bothCutOff: name = "cutboth"
            case .listenerCutOff: name = "cutlisten"
            }
            let listenerOnly = scenario == .listenerCutOff
            let scratch = try TemporaryDirectory(prefix: "fleet-partition")
            defer { scratch.remove() }
            let postgres = try PostgresServer()
            defer { postgres.stop() }
            try await postgres.start()
            try await postgres.createDatabase(name)
            let direct = postgres.connectionString(database: name)
            let proxy = try await BlackholeProxy(to: postgres.port)
            defer { proxy.stop() }
            let throughProxy = direct.replacingOccurrences(of: ":\(postgres.port)/", with: ":\(proxy.port)/")
            try #require(throughProxy != direct)

            let accessLog = scratch.path("access.log")
            let nginx = try NginxServer(
                NginxServer.Configuration(
                    limitRate: Self.rate, extraDirectives: ["access_log \(accessLog) sent;"],
                    httpDirectives: ["log_format sent '$request_uri $status $body_bytes_sent';"]))
            defer { nginx.stop() }
            var random = SeededRandom(seed: 4242)
            var contents: [String: Data] = [:]
            let first =
                (0..<Self.largeFiles).map { "large\($0).bin" } + (0..<Self.smallFiles).map { "small\($0).bin" }
            let late = listenerOnly ? (0..<Self.lateFiles).map { "late\($0).bin" } : []
            let names = first + late
            for file in names {
                let data = Data(random.bytes(file.hasPrefix("large") ? Self.largeSize : Self.smallSize))
                try data.write(to: URL(fileURLWithPath: nginx.documentPath("/" + file)))
                contents[file] = data
            }
            try await nginx.start()

            let shared = scratch.path("downloads")
            func service(_ label: String, store: String) async throws -> DaemonProcess {
                try await DaemonProcess(
                    tool,
                    [
                        "--dir", shared, "--state", scratch.path("state-\(label)"), "--rpc-listen-port", "{port}",
                        "--queue", name, "--lease", String(Self.lease), "--fleet-slots", "4", "--verbose",
                    ], log: scratch.path("daemon-\(label).log"), environment: ["PEREGRINE_STORE": store])
            }
            // The cut-off service starts first and claims the large files (added first).
            let cut = try await service("cut", store: throughProxy)
            defer { cut.stop() }
            func add(_ files: [String], to service: DaemonProcess) async throws -> [String] {
                let calls = files.map {
                    "{\"methodName\":\"aria2.addUri\",\"params\":[[\"\(nginx.httpURL("/" + $0))\"]]}"
                }
                let added = try await service.call("system.multicall", "[\(calls.joined(separator: ","))]")
                let gids = try #require((added["result"] as? [[String]])?.map { $0[0] }, "\(added)")
                try #require(gids.count == files.count)
                return gids
            }
            var gids = try await add(first, to: cut)
            // Cut once its large files moved (the queue records synced progress every second).
            try #require(
                try await waitFor {
                    try await postgres.psql(
                        "SELECT count(*) FROM peregrine_tasks WHERE store = '\(name)' AND url LIKE '%/large%'"
                            + " AND received_length > 0", database: name) == String(Self.largeFiles)
                }, "the large files did not start: \(cut.logText)")
            let other = try await service("other", store: scenario == .bothCutOff ? throughProxy : direct)
            let cutOff = scenario == .bothCutOff ? [cut, other] : [cut]
            defer { other.stop() }

            if listenerOnly {
                try await proxy.cutListeners()
            } else {
                try await proxy.cut()
            }
            let cutAt = ContinuousClock.now
            print("fleet partition (\(name)): cut off")
            var longest: [String: Duration] = [:]
            var answered = 0
            var stoppedAfter: Duration?
            var exitedAfter: Duration?
            if terminating {
                try await Task.sleep(for: .seconds(1))
                let status = await cut.signal(SIGTERM)
                exitedAfter = ContinuousClock.now - cutAt - .seconds(1)
                #expect(status == 0, "\(cut.logText)")
            }
            // Added while the cut-off service hears of nothing: it still claims its share.
            if listenerOnly { gids += try await add(late, to: other) }
            while !terminating, ContinuousClock.now - cutAt < Self.partition {
                // Every call gets an answer (the client gives up after 20 s): the result, or an
                // error saying the queue is unreachable.
                for service in cutOff {
                    for (method, params) in [
                        ("aria2.getVersion", ""), ("aria2.getGlobalStat", ""), ("aria2.tellStatus", "\"\(gids[0])\""),
                        ("aria2.tellActive", ""),
                    ] {
                        let began = ContinuousClock.now
                        let answer = try await service.call(method, params)
                        longest[method] = max(longest[method] ?? .zero, ContinuousClock.now - began)
                        #expect(answer["result"] != nil || answer["error"] != nil, "\(method): \(answer)")
                        if method == "aria2.getVersion" { #expect(answer["result"] != nil, "\(answer)") }
                        if method == "aria2.getGlobalStat" { #expect(answer["result"] != nil, "\(answer)") }
                        if let error = answer["error"] as? [String: Any] {
                            #expect(!listenerOnly, "\(method): \(error)")
                            #expect("\(error["message"] ?? "")".contains("unreachable"), "\(method): \(error)")
                        }
                        answered += 1
                    }
                }
                if stoppedAfter == nil, cut.logText.contains("no lease renewal came through") {
                    stoppedAfter = ContinuousClock.now - cutAt
                }
                try await Task.sleep(for: .milliseconds(250))
            }
            try await proxy.open()
            print(
                "fleet partition (\(name)): \(answered) calls answered while cut off, the longest: \(longest);"
                    + " transfers stopped within \(stoppedAfter.map { "\($0)" } ?? "-") of the cut;"
                    + " SIGTERM ended it after \(exitedAfter.map { "\($0)" } ?? "-")")
            if listenerOnly {
                // Its leases held: nothing stopped. The silent connection was found and replaced.
                #expect(stoppedAfter == nil, "\(cut.logText)")
                let listening = try await waitFor { cut.logText.contains("listening again") }
                #expect(listening, "the cut-off service did not listen again: \(cut.logText)")
            } else if !terminating {
                // The first service holds the large files when the cut comes (the other may hold none).
                #expect(stoppedAfter != nil, "the cut-off service did not stop its transfers: \(cut.logText)")
            }

            let ended = try await waitFor {
                try await postgres.psql(
                    "SELECT count(*) FROM peregrine_tasks WHERE store = '\(name)' AND state = 'finished'",
                    database: name) == String(names.count)
            }
            #expect(ended, "the queue did not end: \(other.logText)")
            // Every file once, under its own name, with its bytes; nothing else left.
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: shared)) ?? []
            #expect(entries.sorted() == names.sorted(), "\(entries.sorted())")
            for file in names {
                #expect(FileManager.default.contents(atPath: shared + "/" + file) == contents[file], "\(file)")
            }
            // Every GID answers on both services (the cut-off one once it connected again: a
            // connection the network swallowed is given up at its deadline).
            for service in cutOff where !terminating {
                let back = try await waitFor {
                    let stat = try await service.call("aria2.getGlobalStat", "")
                    return (stat["result"] as? [String: Any])?["peregrine.stale"] == nil
                }
                #expect(back, "a cut-off service did not reach the queue again: \(service.logText)")
            }
            for service in terminating ? [other] : [cut, other] {
                for gid in gids {
                    let status = try await service.call("aria2.tellStatus", "\"\(gid)\",[\"status\"]")
                    #expect(
                        (status["result"] as? [String: Any])?["status"] as? String == "complete",
                        "\(gid): \(status)")
                }
            }
            let lines = try String(contentsOfFile: accessLog, encoding: .utf8).split(separator: "\n")
            let sent = lines.reduce(0) { total, line in total + (Int(line.split(separator: " ")[2]) ?? 0) }
            let total = Self.largeFiles * Self.largeSize + Self.smallFiles * Self.smallSize
            let ratio = Double(sent) / Double(total)
            // The large files continued from the bytes the cut-off service synced before it
            // stopped, which it marked on their partial files, not from the older offsets the
            // queue recorded; files it placed without reaching the queue were not fetched again.
            let log = other.logText
            let fromMarks = log.components(separatedBy: "its previous holder synced").count - 1
            let adopted = log.components(separatedBy: "before its end reached the queue").count - 1
            print(
                "fleet partition (\(name)): nginx sent \(ratio) × the files' bytes; \(fromMarks) resumed from"
                    + " the synced bytes marked on their files, \(adopted) found placed")
            // (Cut off together, each may continue its own files instead.)
            if scenario == .oneCutOff || scenario == .oneTerminatedWhileCutOff { #expect(fromMarks >= 1, "\(log)") }
            #expect(ratio <= 1.3, "nginx sent \(sent) bytes for \(total)")
            if !terminating { #expect(await cut.signal(SIGTERM) == 0, "\(cut.logText)") }
            #expect(await other.signal(SIGTERM) == 0, "\(other.logText)")
        }

        /// Polls `condition` every 200 ms; false after 180 s (a hang guard: nothing here is timed).
        private func waitFor(_ condition: () async throws -> Bool) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(180)
            while ContinuousClock.now < deadline {
                if try await condition() { return true }
                try await Task.sleep(for: .milliseconds(200))
            }
            return false
        }
    }
}
