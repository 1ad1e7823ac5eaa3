import Foundation
import Peregrine
import PeregrineCore
import PeregrineService
import Synchronization
import TestSupport
import Testing

/// The RPC of a fleet service (`RPCServiceConfiguration.fleetQueue`) on an in-memory queue:
/// what `aria2.addUri` puts into the shared queue and what `tellStatus` reports for it while
/// other services hold it.
@Suite struct FleetRPCTests {
    /// A `ClaimingTaskQueue` in memory that the test moves by hand, as other services would.
    final class QueueDouble: ClaimingTaskQueue {
        let queue = "fleet"
        let owner = "this-service"
        let leaseDuration = Duration.seconds(30)
        let entriesByURL = Locked<[String: QueuedTask]>([:])
        let isReachable = Atomic<Bool>(true)

        /// How many tasks each `enqueue` call carried.
        let enqueueCalls = Locked<[Int]>([])

        func enqueue(_ tasks: [StoredTask]) throws(StoreError) -> [String] {
            try check()
            enqueueCalls.withLock { $0.append(tasks.count) }
            let added: [String] = entriesByURL.withLock { entries in
                tasks.compactMap { task in
                    guard entries[task.urlString] == nil else { return nil }
                    entries[task.urlString] = QueuedTask(task: task, holder: nil, claims: 0)
                    return task.urlString
                }
            }
            orders.withLock { orders in
                for url in added { orders.added[url] = orders.added.count }
            }
            return added
        }
        func claim(limit: Int) throws(StoreError) -> [TaskLease] { [] }
        func renew(_ progress: [StoredTask]) throws(StoreError) -> Set<String> { [] }
        func finish(_ outcomes: [StoredTask]) throws(StoreError) -> Set<String> { [] }
        func release(_ tasks: [StoredTask]) throws(StoreError) -> Set<String> { [] }
        func waitForWork(timeout: Duration) async -> Bool { false }
        func entries(_ urls: [String]) throws(StoreError) -> [String: QueuedTask] {
            try check()
            return entriesByURL.withLock { entries in entries.filter { urls.contains($0.key) } }
        }
        /// The order of addition and of ending, as the queue numbers them.
        let orders = Locked<(added: [String: Int], ended: [String: Int64], lastEnded: Int64)>(([:], [:], 0))

        func page(_ phase: QueuePhase, offset: Int, count: Int) throws(StoreError) -> [QueuedTask] {
            try check()
            let (added, ended, _) = orders.withLock { ($0.added, $0.ended, $0.lastEnded) }
            let all = entriesByURL.withLock { Array($0.values) }.filter { entry in
                switch (phase, entry.task.state) {
                case (.waiting, .pending), (.waiting, .paused): true
                case (.held, .downloading): entry.holder != nil
                case (.ended, .finished), (.ended, .failed): true
                case (.all, _): true
                default: false
                }
            }.sorted { first, second in
                phase == .ended
                    ? ended[first.task.urlString, default: 0] < ended[second.task.urlString, default: 0]
                    : added[first.task.urlString, default: 0] < added[second.task.urlString, default: 0]
            }
            return Pagination.page(all, offset: offset, num: count)
        }
        func census() throws(StoreError) -> QueueCensus {
            QueueCensus(
                waiting: try page(.waiting, offset: 0, count: .max).count,
                held: try page(.held, offset: 0, count: .max).count,
                ended: try page(.ended, offset: 0, count: .max).count,
                newestAddition: Int64(orders.withLock { $0.added.values.max() ?? -1 } + 1))
        }
        func endings(after cursor: Int64?, limit: Int) throws(StoreError) -> (tasks: [QueuedTask], cursor: Int64) {
            try check()
            let (ended, last) = orders.withLock { ($0.ended, $0.lastEnded) }
            guard let cursor else { return ([], last) }
            let urls = ended.filter { $0.value > cursor }.sorted { $0.value < $1.value }.prefix(limit).map(\.key)
            let entries = entriesByURL.withLock { entries in urls.compactMap { entries[$0] } }
            return (entries, urls.last.flatMap { ended[$0] } ?? cursor)
        }
        func waitForEndings(timeout: Duration) async -> Bool {
            // A double polls: the follower reads the endings every 10 ms.
            try? await Task.sleep(for: .milliseconds(10))
            return false
        }

        func controlAll(_ change: QueueControl) throws(StoreError) -> Set<String> {
            try control(entriesByURL.withLock { Array($0.keys) }, change)
        }

        func control(_ urls: [String], _ change: QueueControl) throws(StoreError) -> Set<String> {
            try check()
            return entriesByURL.withLock { entries in
                var changed: Set<String> = []
                for url in urls {
                    guard let entry = entries[url] else { continue }
                    switch (change, entry.task.state) {
                    case (.pause, .pending), (.pause, .downloading):
                        entries[url]?.task.state = .paused
                        entries[url]?.holder = nil
                    case (.resume, .paused), (.retry, .failed), (.retry, .stopped): entries[url]?.task.state = .pending
                    case (.remove, .pending), (.remove, .downloading), (.remove, .paused): entries[url] = nil
                    case (.forget, .finished), (.forget, .failed), (.forget, .stopped): entries[url] = nil
                    default: continue
                    }
                    changed.insert(url)
                }
                return changed
            }
        }

        /// Another service ends a task, numbered as the queue numbers endings.
        func end(_ url: String, as state: DownloadState) {
            update(url) { entry in
                entry.holder = nil
                entry.task.state = state
            }
            orders.withLock { orders in
                orders.lastEnded += 1
                orders.ended[url] = orders.lastEnded
            }
        }

        func entries(keyHashes: [UInt64]) throws(StoreError) -> [String: QueuedTask] {
            try check()
            return entriesByURL.withLock { entries in
                entries.filter { keyHashes.contains(QueueKeyHash.of($0.key)) }
            }
        }

        /// What another service does to a task.
        func update(_ url: String, _ change: (inout QueuedTask) -> Void) {
            entriesByURL.withLock { entries in if entries[url] != nil { change(&entries[url]!) } }
        }

        private func check() throws(StoreError) {
            guard isReachable.load(ordering: .relaxed) else {
                throw StoreError(.unavailable, path: "postgresql://peregrine:***@db/fleet", "the database is down")
            }
        }
    }

    private func call(_ service: RPCService, _ method: String, _ params: String) async throws -> [String: Any] {
        let body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\(method)\",\"params\":[\(params)]}"
        let text = await service.dispatcher.respond(to: Array(body.utf8))
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    private func status(_ service: RPCService, _ gid: String) async throws -> [String: Any] {
        let response = try await call(service, "aria2.tellStatus", "\"\(gid)\"")
        return try #require(response["result"] as? [String: Any], "\(response)")
    }

    @Test func addUriQueuesTheDownloadAndTellStatusFollowsItThroughTheQueue() async throws {
        let scratch = try TemporaryDirectory(prefix: "fleet-rpc")
        defer { scratch.remove() }
        var managerConfiguration = DownloadManager.Configuration(
            downloadDirectory: scratch.path("downloads"), stateDirectory: scratch.path("state"))
        managerConfiguration.downloadNewFileImmediately = false
        let manager = try DownloadManager(identifier: "fleet-rpc", configuration: managerConfiguration)
        let queue = QueueDouble()
        var configuration = RPCServiceConfiguration(port: 0)
        configuration.fleetQueue = queue
        let service = RPCService(manager: manager, configuration: configuration, logger: Logger(label: "test"))

        // Added to the queue under the normalized URL, not to this service's manager.
        let added = try await call(service, "aria2.addUri", "[\"HTTP://Example.COM:80/a.bin\"], {\"out\":\"b.bin\"}")
        let gid = try #require(added["result"] as? String, "\(added)")
        let key = "http://example.com/a.bin"
        #expect(queue.entriesByURL.withLock { $0[key]?.task.preferredFileName } == "b.bin")
        #expect(manager.engine.task(key) == nil)
        #expect(try await status(service, gid)["status"] as? String == "waiting")

        // The same URL again: the same GID, still one task.
        let again = try await call(service, "aria2.addUri", "[\"http://example.com/a.bin\"]")
        #expect(again["result"] as? String == gid)
        #expect(queue.entriesByURL.withLock { $0.count } == 1)

        // Another service claims it and renews with progress.
        queue.update(key) { entry in
            entry.holder = "service-b"
            entry.claims = 1
            entry.task.state = .downloading
            entry.task.expectedLength = 100
            entry.task.receivedLength = 40
        }
        let active = try await status(service, gid)
        #expect(active["status"] as? String == "active")
        #expect(active["peregrine.holder"] as? String == "service-b")
        #expect(active["completedLength"] as? String == "40")
        #expect(active["totalLength"] as? String == "100")

        // Its lease expired: waiting again, held by nobody.
        queue.update(key) { entry in
            entry.holder = nil
            entry.task.state = .pending
        }
        let expired = try await status(service, gid)
        #expect(expired["status"] as? String == "waiting")
        #expect(expired["peregrine.holder"] == nil)

        // Finished elsewhere: complete; failed elsewhere: error with the reason.
        queue.update(key) { entry in
            entry.task.state = .finished
            entry.task.receivedLength = 100
        }
        #expect(try await status(service, gid)["status"] as? String == "complete")
        queue.update(key) { $0.task.state = .failed(FailureReason(.httpStatus, httpStatus: 404, message: "404")) }
        let failed = try await status(service, gid)
        #expect(failed["status"] as? String == "error")
        #expect(failed["errorCode"] as? String == "3")

        // The database away: an error, never a made-up status.
        queue.isReachable.store(false, ordering: .relaxed)
        let unreachable = try await call(service, "aria2.tellStatus", "\"\(gid)\"")
        #expect(unreachable["result"] == nil)
        let message = (unreachable["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("unreachable"), "\(unreachable)")
        let refusedAdd = try await call(service, "aria2.addUri", "[\"http://example.com/c.bin\"]")
        #expect(refusedAdd["error"] != nil, "\(refusedAdd)")
        queue.isReachable.store(true, ordering: .relaxed)

        // What the queue cannot carry is refused, not dropped; so is a dir outside the root.
        for params in [
            "[\"http://example.com/d.bin\"], {\"dir\":\"../outside\"}",
            "[\"http://example.com/d.bin\"], {}, 0",
            "[\"http://example.com/d.bin\", \"not a uri\"]",
        ] {
            let refused = try await call(service, "aria2.addUri", params)
            #expect(refused["error"] != nil, "\(params): \(refused)")
        }
        #expect(queue.entriesByURL.withLock { $0.count } == 1)

        // Mirrors, connections, a speed limit and request headers go with the task.
        let carried = try await call(
            service, "aria2.addUri",
            #"["http://example.com/m.bin", "HTTP://Mirror.example.com/m.bin"], {"split":"4","max-connection-per-server":"2","max-download-limit":"65536","header":["X-Token: abc"],"dir":"sub//deeper/"}"#
        )
        #expect(carried["result"] is String, "\(carried)")
        let queued = try #require(queue.entriesByURL.withLock { $0["http://example.com/m.bin"]?.task })
        #expect(queued.mirrors == ["http://mirror.example.com/m.bin"])
        #expect(queued.maxConnections == 4 && queued.speedLimit == 65536)
        // The folder, relative: each service places the file in it inside its own root.
        #expect(queued.subdirectory == "sub/deeper")

        // Added paused: paused in the queue, where no service claims it until it is unpaused.
        let pausedAdd = try await call(service, "aria2.addUri", #"["http://example.com/p.bin"], {"pause":"true"}"#)
        let pausedGID = try #require(pausedAdd["result"] as? String, "\(pausedAdd)")
        #expect(queue.entriesByURL.withLock { $0["http://example.com/p.bin"]?.task.state } == .paused)
        #expect(try await status(service, pausedGID)["status"] as? String == "paused")
        queue.entriesByURL.withLock { _ = $0.removeValue(forKey: "http://example.com/p.bin") }
        guard case .dictionary(let options) = queued.metaInfo["aria2.options"] else {
            Issue.record("no options in the queued task's meta info: \(queued.metaInfo)")
            return
        }
        #expect(options["header"] == .string("X-Token: abc"), "\(options)")
        queue.update("http://example.com/m.bin") { $0.task.state = .finished }

        // A multicall of additions goes into the queue in one call; when that fails, each
        // accepted call answers the error, and a refused one keeps its own.
        let calls = (1...3).map { #"{"methodName":"aria2.addUri","params":[["http://example.com/batch\#($0).bin"]]}"# }
        queue.enqueueCalls.withLock { $0 = [] }
        let batch = try await call(service, "system.multicall", "[\(calls.joined(separator: ","))]")
        let batchResults = try #require(batch["result"] as? [Any], "\(batch)")
        #expect(batchResults.allSatisfy { ($0 as? [Any])?.first is String }, "\(batch)")
        #expect(queue.enqueueCalls.withLock { $0 } == [3])
        queue.isReachable.store(false, ordering: .relaxed)
        let refusedCall = #"{"methodName":"aria2.addUri","params":[["http://example.com/x.bin"],{"dir":"/etc"}]}"#
        let failedBatch = try await call(
            service, "system.multicall",
            "[\(calls.joined(separator: ",").replacingOccurrences(of: "batch", with: "later")),\(refusedCall)]")
        queue.isReachable.store(true, ordering: .relaxed)
        let failedResults = try #require(failedBatch["result"] as? [[String: Any]], "\(failedBatch)")
        #expect(failedResults.count == 4)
        #expect(
            failedResults.prefix(3).allSatisfy { ($0["message"] as? String)?.contains("unreachable") == true },
            "\(failedBatch)")
        #expect(
            (failedResults[3]["message"] as? String)?.contains("outside the download root") == true, "\(failedBatch)")
        #expect(queue.entriesByURL.withLock { $0.keys.filter { $0.contains("later") } }.isEmpty)

        // The dashboard's peregrine.addUris goes into the queue too; a list or a pause is refused.
        let dashboard = try await call(service, "peregrine.addUris", "[\"http://example.com/e.bin\"]")
        let rows = try #require(dashboard["result"] as? [[String: Any]], "\(dashboard)")
        let rowGID = try #require(rows.first?["gid"] as? String, "\(rows)")
        #expect(try await status(service, rowGID)["status"] as? String == "waiting")
        let paused = try await call(service, "peregrine.addUris", "[\"http://example.com/f.bin\"], {\"pause\":true}")
        #expect(paused["error"] != nil, "\(paused)")
        #expect(queue.entriesByURL.withLock { $0.count } == 6)
        #expect(manager.engine.tasks().isEmpty)
    }

    /// The service that downloads a task (its worker added it to its manager from the queue)
    /// answers for the GID the adding service handed out, before it ever listed the task; a
    /// third service, which neither added nor holds it, finds it in the queue by that GID.
    @Test func everyServiceAnswersForTheAddersGID() async throws {
        let scratch = try TemporaryDirectory(prefix: "fleet-rpc-gid")
        defer { scratch.remove() }
        let queue = QueueDouble()
        var services: [RPCService] = []
        var managers: [DownloadManager] = []
        for name in ["a", "b", "c"] {
            var managerConfiguration = DownloadManager.Configuration(
                downloadDirectory: scratch.path("downloads-\(name)"), stateDirectory: scratch.path("state-\(name)"))
            managerConfiguration.downloadNewFileImmediately = false
            let manager = try DownloadManager(identifier: "fleet-\(name)", configuration: managerConfiguration)
            var configuration = RPCServiceConfiguration(port: 0)
            configuration.fleetQueue = queue
            managers.append(manager)
            services.append(RPCService(manager: manager, configuration: configuration, logger: Logger(label: "test")))
        }
        let added = try await call(services[0], "aria2.addUri", "[\"http://example.com/g.bin\"]")
        let gid = try #require(added["result"] as? String, "\(added)")
        // B's worker claims it: the task is in B's manager (not started here).
        _ = try managers[1].download([DownloadItem("http://example.com/g.bin")])
        let onB = try await status(services[1], gid)
        #expect(onB["gid"] as? String == gid)
        #expect(onB["status"] as? String == "waiting")
        #expect(onB["dir"] as? String == managers[1].downloadDirectory, "B answers from its own manager")
        // B holds it (the lease is its): B's own status, naming B as the holder, as the
        // dashboard's updates read it.
        queue.update("http://example.com/g.bin") { entry in
            entry.holder = queue.owner
            entry.claims = 1
        }
        let heldOnB = try await status(services[1], gid)
        #expect(heldOnB["dir"] as? String == managers[1].downloadDirectory)
        #expect(heldOnB["peregrine.holder"] as? String == queue.owner)
        let unknown = try await call(services[1], "aria2.tellStatus", "\"00000000000000aa\"")
        #expect(unknown["error"] != nil)

        // C never saw the URL: it finds the task in the queue by the GID's key hash.
        queue.update("http://example.com/g.bin") { entry in
            entry.holder = "service-b"
            entry.claims = 1
            entry.task.state = .downloading
            entry.task.expectedLength = 100
            entry.task.receivedLength = 25
        }
        let onC = try await status(services[2], gid)
        #expect(onC["gid"] as? String == gid)
        #expect(onC["status"] as? String == "active")
        #expect(onC["peregrine.holder"] as? String == "service-b")
        #expect(onC["completedLength"] as? String == "25")
        #expect(managers[2].engine.task("http://example.com/g.bin") == nil, "C only reads the queue")
        // A GID of no task in the queue is still unknown on C; with the database away, an error says so.
        let missing = try await call(services[2], "aria2.tellStatus", "\"\(GIDText.flip(gid))\"")
        #expect(
            ((missing["error"] as? [String: Any])?["message"] as? String)?.hasSuffix("is not found") == true,
            "\(missing)")
        queue.isReachable.store(false, ordering: .relaxed)
        let away = try await call(services[2], "aria2.tellStatus", "\"\(GIDText.flip(gid))\"")
        let message = (away["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("unreachable"), "\(away)")
    }

    /// On a fleet service, `tellActive`, `tellWaiting` and `getGlobalStat` show the whole
    /// fleet's queue, and what other services end reaches this service's WebSocket clients as
    /// aria2's notifications.
    @Test func listsAndNotificationsCoverTheWholeFleet() async throws {
        let scratch = try TemporaryDirectory(prefix: "fleet-rpc-lists")
        defer { scratch.remove() }
        var managerConfiguration = DownloadManager.Configuration(
            downloadDirectory: scratch.path("downloads"), stateDirectory: scratch.path("state"))
        managerConfiguration.downloadNewFileImmediately = false
        let manager = try DownloadManager(identifier: "fleet-lists", configuration: managerConfiguration)
        let queue = QueueDouble()
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var configuration = RPCServiceConfiguration(port: 0, onListening: { continuation.yield($0) })
        configuration.fleetQueue = queue
        let service = RPCService(manager: manager, configuration: configuration, logger: Logger(label: "test"))
        let running = Task { try await service.run() }
        defer { service.requestShutdown() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next(), "the service did not start")

        // Five downloads added elsewhere (the queue), two of them held by other services.
        let urls = (1...5).map { "http://example.com/\($0).bin" }
        _ = try queue.enqueue(
            urls.map { StoredTask(urlString: $0, receivedLength: 0, state: .pending, addedAt: Date()) })
        for (url, holder) in [(urls[1], "service-b"), (urls[3], "service-c")] {
            queue.update(url) { entry in
                entry.holder = holder
                entry.task.state = .downloading
            }
        }
        func gids(_ response: [String: Any]) -> [String] {
            (response["result"] as? [[String: Any]] ?? []).compactMap { $0["gid"] as? String }
        }
        func fleetGID(_ url: String) throws -> String {
            let added = try #require(queue.entriesByURL.withLock { $0[url] })
            return String(QueueKeyHash.of(added.task.urlString), radix: 16).leftPadded(to: 16)
        }
        let active = try await call(service, "aria2.tellActive", "[\"gid\", \"status\", \"peregrine.holder\"]")
        #expect(gids(active) == [try fleetGID(urls[1]), try fleetGID(urls[3])], "\(active)")
        let holders = (active["result"] as? [[String: Any]] ?? []).compactMap { $0["peregrine.holder"] as? String }
        #expect(holders == ["service-b", "service-c"])
        let waiting = try await call(service, "aria2.tellWaiting", "0, 10, [\"gid\"]")
        #expect(try gids(waiting) == [urls[0], urls[2], urls[4]].map { try fleetGID($0) }, "\(waiting)")
        // aria2's paging from the end: the last one, then the one before it.
        let fromEnd = try await call(service, "aria2.tellWaiting", "-1, 2, [\"gid\"]")
        #expect(try gids(fromEnd) == [urls[4], urls[2]].map { try fleetGID($0) }, "\(fromEnd)")
        let stat = try #require(try await call(service, "aria2.getGlobalStat", "")["result"] as? [String: Any])
        #expect(stat["numActive"] as? String == "2" && stat["numWaiting"] as? String == "3", "\(stat)")

        // A WebSocket client of this service hears of what the others end.
        let messages = try await onOwnThread { () -> [String] in
            let client = try RPCTestClient(port: port)
            guard client.upgradeToWebSocket() == 101 else { return ["no upgrade"] }
            // One call answered: the connection is served (and hears notifications) from here on.
            client.sendText(#"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion"}"#)
            guard client.receiveText()?.contains("version") == true else { return ["no answer"] }
            // Now the other services end their tasks.
            queue.end(urls[1], as: .finished)
            queue.end(urls[3], as: .failed(FailureReason(.httpStatus, httpStatus: 404, message: "404")))
            var received: [String] = []
            while received.count < 2, let text = client.receiveText() { received.append(text) }
            return received
        }
        #expect(
            messages == [
                #"{"jsonrpc":"2.0","method":"aria2.onDownloadComplete","params":[{"gid":"\#(try fleetGID(urls[1]))"}]}"#,
                #"{"jsonrpc":"2.0","method":"aria2.onDownloadError","params":[{"gid":"\#(try fleetGID(urls[3]))"}]}"#,
            ])
        let afterwards = try await call(service, "aria2.tellActive", "[\"gid\"]")
        #expect(gids(afterwards).isEmpty, "\(afterwards)")

        // Any service pauses, resumes and removes a task of the queue, whoever holds it.
        let first = try fleetGID(urls[0])
        #expect(try await call(service, "aria2.pause", "\"\(first)\"")["result"] as? String == first)
        #expect(queue.entriesByURL.withLock { $0[urls[0]]?.task.state } == .paused)
        let pausedWaiting = try await call(service, "aria2.tellWaiting", "0, 10, [\"gid\", \"status\"]")
        let statuses = (pausedWaiting["result"] as? [[String: Any]] ?? []).map { $0["status"] as? String }
        #expect(statuses == ["paused", "waiting", "waiting"], "\(pausedWaiting)")
        #expect(try await call(service, "aria2.pause", "\"\(first)\"")["error"] != nil, "paused twice")
        #expect(try await call(service, "aria2.unpause", "\"\(first)\"")["result"] as? String == first)
        #expect(queue.entriesByURL.withLock { $0[urls[0]]?.task.state } == .pending)
        let third = try fleetGID(urls[2])
        #expect(try await call(service, "aria2.remove", "\"\(third)\"")["result"] as? String == third)
        #expect(queue.entriesByURL.withLock { $0[urls[2]] } == nil)
        #expect(try await call(service, "aria2.tellStatus", "\"\(third)\"")["error"] != nil)
        // A task that ended cannot be paused or removed.
        let ended = try fleetGID(urls[1])
        #expect(try await call(service, "aria2.pause", "\"\(ended)\"")["error"] != nil)
        #expect(try await call(service, "aria2.remove", "\"\(ended)\"")["error"] != nil)
        service.requestShutdown()
        try await running.value
    }
    /// A fleet service's dashboard shows the shared queue: every task in the order added,
    /// whichever service added or holds it, with its holder; the list's revision moves when
    /// another service adds a task; pause all and unpause all reach tasks held elsewhere; a
    /// failed task is retried; ended tasks are listed, counted and forgotten through the queue;
    /// the list model's methods (sort, sections, trash) are refused.
    @Test func theDashboardOfAFleetServiceShowsTheWholeQueue() async throws {
        let scratch = try TemporaryDirectory(prefix: "fleet-rpc-dashboard")
        defer { scratch.remove() }
        var managerConfiguration = DownloadManager.Configuration(
            downloadDirectory: scratch.path("downloads"), stateDirectory: scratch.path("state"))
        managerConfiguration.downloadNewFileImmediately = false
        let manager = try DownloadManager(identifier: "fleet-dashboard", configuration: managerConfiguration)
        let queue = QueueDouble()
        var configuration = RPCServiceConfiguration(port: 0)
        configuration.fleetQueue = queue
        let service = RPCService(manager: manager, configuration: configuration, logger: Logger(label: "test"))

        // Added by other services: one waiting, one held by another host, one failed there.
        let urls = ["http://example.com/a.iso", "http://example.com/b.jpg", "http://example.com/c.mp3"]
        _ = try queue.enqueue(
            urls.map { StoredTask(urlString: $0, receivedLength: 0, state: .pending, addedAt: Date()) })
        queue.update(urls[1]) { entry in
            entry.holder = "host-b:42:7"
            entry.task.state = .downloading
            entry.task.expectedLength = 1000
            entry.task.receivedLength = 250
            // Its holder's speed at its last renewal.
            entry.task.metaInfo[QueueMetaKey.speed] = .integer(4096)
        }
        queue.end(urls[2], as: .failed(FailureReason(.httpStatus, httpStatus: 404, message: "404")))
        func gid(_ url: String) -> String { String(QueueKeyHash.of(url), radix: 16).leftPadded(to: 16) }

        #expect(try await call(service, "peregrine.lists", "")["result"] as? [String] == [""])
        func view() async throws -> (view: [String: Any], rows: [[String: Any]]) {
            let response = try await call(service, "peregrine.listView", "")
            let view = try #require(response["result"] as? [String: Any], "\(response)")
            let fields = try #require(view["fields"] as? [String])
            let sections = try #require(view["sections"] as? [[String: Any]])
            let rows = sections.flatMap { ($0["downloads"] as? [[Any]]) ?? [] }.map {
                Dictionary(uniqueKeysWithValues: zip(fields, $0))
            }
            return (view, rows)
        }
        let (first, rows) = try await view()
        #expect(first["fleet"] as? Bool == true && first["queueTotal"] as? Int == 3, "\(first)")
        #expect(rows.map { $0["gid"] as? String } == urls.map(gid))
        #expect(rows.map { $0["name"] as? String } == ["a.iso", "b.jpg", "c.mp3"])
        #expect(rows.map { $0["status"] as? String } == ["waiting", "active", "error"])
        #expect(rows.map { $0["holder"] as? String } == ["", "host-b:42:7", ""])
        #expect(rows.map { $0["kind"] as? String } == ["Other", "Image", "Audio"], "\(rows)")
        #expect(rows[1]["total"] as? Int == 1000 && rows[1]["done"] as? Int == 250, "\(rows[1])")
        // The holder's speed, in the row, in tellActive and in the fleet's global speed.
        #expect(rows.map { $0["speed"] as? Int } == [0, 4096, 0], "\(rows)")
        let active = try await call(service, "aria2.tellActive", "[\"gid\", \"downloadSpeed\"]")
        #expect(active["result"] as? [[String: String]] == [["gid": gid(urls[1]), "downloadSpeed": "4096"]])
        let global = try await call(service, "aria2.getGlobalStat", "")["result"] as? [String: Any]
        #expect(global?["downloadSpeed"] as? String == "4096", "\(String(describing: global))")

        // Another service adds a task: the revision moves, and the list has it last.
        let revision = try await call(service, "peregrine.listRevision", "")["result"] as? Int
        #expect(try await call(service, "peregrine.listRevision", "")["result"] as? Int == revision)
        _ = try queue.enqueue([
            StoredTask(urlString: "http://example.com/d.pdf", receivedLength: 0, state: .pending, addedAt: Date())
        ])
        let moved = try await call(service, "peregrine.listRevision", "")["result"] as? Int
        #expect(moved != nil && moved != revision)
        #expect(try await view().rows.map { $0["name"] as? String } == ["a.iso", "b.jpg", "c.mp3", "d.pdf"])

        // Pause all reaches the task another service holds; unpause all lets them wait again.
        #expect(try await call(service, "aria2.pauseAll", "")["result"] as? String == "OK")
        let paused = queue.entriesByURL.withLock { entries in urls.map { entries[$0]?.task.state } }
        #expect(paused == [.paused, .paused, .failed(FailureReason(.httpStatus, httpStatus: 404, message: "404"))])
        #expect(queue.entriesByURL.withLock { $0[urls[1]]?.holder } == nil)
        #expect(try await view().rows.map { $0["status"] as? String } == ["paused", "paused", "error", "paused"])
        #expect(try await call(service, "aria2.unpauseAll", "")["result"] as? String == "OK")
        #expect(try await view().rows.map { $0["status"] as? String } == ["waiting", "waiting", "error", "waiting"])

        // The failed task is retried (the dashboard's resume of a failed row); a waiting one
        // cannot be.
        #expect(
            try await call(service, "peregrine.restart", "\"\(gid(urls[2]))\"")["result"] as? String == gid(urls[2]))
        #expect(queue.entriesByURL.withLock { $0[urls[2]]?.task.state } == .pending)
        #expect(try await call(service, "peregrine.restart", "\"\(gid(urls[0]))\"")["error"] != nil)

        // Ended tasks: listed by tellStopped and counted by getGlobalStat as the queue has
        // them; their results leave the queue one by one or all at once.
        queue.end(urls[0], as: .finished)
        let stopped = try await call(service, "aria2.tellStopped", "0, 10, [\"gid\", \"status\"]")
        let stoppedRows = stopped["result"] as? [[String: String]] ?? []
        #expect(stoppedRows == [["gid": gid(urls[0]), "status": "complete"]], "\(stopped)")
        let stat = try await call(service, "aria2.getGlobalStat", "")["result"] as? [String: Any]
        #expect(stat?["numStopped"] as? String == "1", "\(String(describing: stat))")
        let forgotten = try await call(service, "aria2.removeDownloadResult", "\"\(gid(urls[0]))\"")
        #expect(forgotten["result"] as? String == "OK", "\(forgotten)")
        #expect(queue.entriesByURL.withLock { $0[urls[0]] } == nil)
        #expect(try await call(service, "aria2.removeDownloadResult", "\"\(gid(urls[1]))\"")["error"] != nil)
        queue.end(urls[1], as: .failed(FailureReason(.network, message: "reset")))
        #expect(try await call(service, "aria2.purgeDownloadResult", "")["result"] as? String == "OK")
        #expect(queue.entriesByURL.withLock { $0[urls[1]] } == nil)
        #expect(queue.entriesByURL.withLock { $0[urls[2]] } != nil, "a waiting task stays")

        // What the shared queue does not have is refused, not dropped.
        for (method, params) in [
            ("peregrine.setSort", "\"fileName\""), ("peregrine.trash", "\"\(gid(urls[0]))\""),
            ("peregrine.trashView", ""), ("peregrine.moveTask", "\"\(gid(urls[0]))\", 0, 1"),
        ] {
            let refused = try await call(service, method, params)
            let message = (refused["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("fleet service"), "\(method): \(refused)")
        }
    }
}

/// GIDs as text, for lookups that must miss.
enum GIDText {
    /// `gid` with its last hex digit changed: another GID.
    static func flip(_ gid: String) -> String {
        let last = gid.last == "0" ? "1" : "0"
        return String(gid.dropLast()) + last
    }
}

extension String {
    /// The string with zeros in front, `width` characters long at least.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
