import Foundation
import Peregrine
import PeregrineFleet
import PeregrineMockTransport
import PeregrinePostgresStorage
import TestSupport
import Testing

/// Download managers as services of one fleet: one PostgreSQL queue, the mock transport, a
/// shared download directory (issue 20).
@Suite("Fleet workers on a shared PostgreSQL queue")
struct FleetWorkerTests {
    /// One service: a manager with a store of its own and a worker on the shared queue.
    private struct Service {
        let manager: DownloadManager
        let queue: PostgresClaimingQueue
        let worker: FleetWorker
        let run: Task<Void, Never>

        func stop() async {
            run.cancel()
            await run.value
            queue.close()
        }
    }

    private func service(
        _ name: String, scratch: TemporaryDirectory, server: MockServer, connection: String,
        mode: MockTransport.Mode = .automatic, lease: Duration = .seconds(30), slots: Int = 8,
        transport: MockTransport? = nil, manager existing: DownloadManager? = nil
    ) throws -> Service {
        var configuration = DownloadManager.Configuration(
            downloadDirectory: scratch.path("downloads"), stateDirectory: scratch.path("state-\(name)"),
            transport: transport ?? MockTransport(server: server, mode: mode))
        configuration.maxDownloadCount = slots
        let manager = try existing ?? DownloadManager(identifier: name, configuration: configuration)
        let queue = try PostgresClaimingQueue(
            queue: "fleet", connectionString: connection, owner: name, leaseDuration: lease)
        let worker = FleetWorker(
            manager: manager, queue: queue,
            configuration: FleetWorker.Configuration(
                slots: slots, initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(200),
                idleClaimInterval: .milliseconds(50)))
        return Service(manager: manager, queue: queue, worker: worker, run: Task { await worker.run() })
    }

    private func task(_ url: String) -> StoredTask {
        StoredTask(urlString: url, receivedLength: 0, state: .pending, addedAt: Date())
    }

    /// Waits (at most 120 s, however slow the machine) until `condition` holds.
    private func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(120)
        while clock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("timed out waiting until \(what)")
    }

    @Test func everyTaskIsDownloadedAndFinishedExactlyOnceAcrossServices() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-fleet")
        defer { scratch.remove() }
        let (postgres, database, connection) = try await FleetPostgres.freshDatabase("fleet")
        let server = MockServer()
        let count = 90
        for index in 0..<count {
            // Zero-byte files and small ones.
            server.setRoute(
                .file(.generated(seed: UInt64(index), count: index % 2 == 0 ? 0 : 3000)), for: "/\(index).bin")
        }
        let services = try (0..<3).map { number in
            try service("service-\(number)", scratch: scratch, server: server, connection: connection)
        }
        let urls = (0..<count).map { "http://mock.test/\($0).bin" }
        #expect(try services[0].queue.enqueue(urls.map(task)).count == count)
        try await eventually("every task was finished") {
            services.map(\.worker.statistics.finished).reduce(0, +) == count
        }
        for service in services { await service.stop() }

        let statistics = services.map(\.worker.statistics)
        #expect(statistics.map(\.finished).reduce(0, +) == count)
        #expect(statistics.allSatisfy { $0.refused == 0 && $0.lost == 0 && $0.takenOver == 0 })
        for index in 0..<count {
            // Fetched once, by one service, and the file is right.
            #expect(server.requests(for: "/\(index).bin").count == 1, "\(index)")
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: scratch.path("downloads/\(index).bin"))))
            #expect(bytes == MockBody.generated(seed: UInt64(index), count: index % 2 == 0 ? 0 : 3000).allBytes)
        }
        #expect(
            try await postgres.psql(
                "SELECT count(*), max(claims) FROM peregrine_tasks WHERE store = 'fleet' AND state = 'finished'",
                database: database) == "\(count)|1")
    }

    @Test func aDeadServicesTaskResumesFromItsPartialFileOnSharedStorage() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-fleet")
        defer { scratch.remove() }
        let (_, _, connection) = try await FleetPostgres.freshDatabase("resume")
        let server = MockServer()
        let body = MockBody.generated(seed: 7, count: 100_000)
        server.setRoute(.file(body, entityTag: .fixed("\"v1\"")), for: "/big.bin")
        let url = "http://mock.test/big.bin"

        // A service claimed the task, wrote 40,000 bytes to the shared directory, recorded them,
        // and died: it never renews again.
        let dead = try PostgresClaimingQueue(
            queue: "fleet", connectionString: connection, owner: "dead", leaseDuration: .milliseconds(200))
        defer { dead.close() }
        _ = try dead.enqueue([task(url)])
        var claimed = try #require(try dead.claim(limit: 1).first).task
        try FileManager.default.createDirectory(atPath: scratch.path("downloads"), withIntermediateDirectories: true)
        try Data(body.bytes(in: 0..<40_000)).write(to: URL(fileURLWithPath: scratch.path("downloads/dead.part")))
        claimed.temporaryFileName = "dead.part"
        claimed.receivedLength = 40_000
        claimed.expectedLength = 100_000
        claimed.resumeRecord = ResumeRecord(offset: 40_000, validator: .entityTag("\"v1\""), expectedLength: 100_000)
        #expect(try dead.renew([claimed]) == [url])

        let heir = try service("heir", scratch: scratch, server: server, connection: connection)
        try await eventually("the heir finished the task") { heir.worker.statistics.finished == 1 }
        await heir.stop()
        #expect(heir.worker.statistics.takenOver == 1)
        #expect(heir.worker.statistics.resumed == 1)
        let requests = server.requests(for: "/big.bin")
        #expect(requests.count == 1)
        #expect(requests.first?.headers["Range"] == "bytes=40000-")
        let file = try #require(heir.manager.filePath(ofTask: url))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: file))) == body.allBytes)
        // The dead service, back, cannot finish what it lost.
        #expect(try dead.finish([claimed]).isEmpty)
    }

    /// A service that placed a file but could not record the task finished before its lease
    /// expired (cut off from the database): its temporary name, in the queue's record, is still
    /// a hard link to the placed file. The service that takes the task over finishes it with
    /// that file — no request, no `NAME (1)` copy — and removes the second name once recorded.
    @Test func aFilePlacedByAHolderCutOffIsFinishedWithoutDownloadingItAgain() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-fleet")
        defer { scratch.remove() }
        let (_, _, connection) = try await FleetPostgres.freshDatabase("placed")
        let server = MockServer()
        let body = MockBody.generated(seed: 9, count: 50_000)
        server.setRoute(.file(body, entityTag: .fixed("\"v1\"")), for: "/done.bin")
        let url = "http://mock.test/done.bin"
        let downloads = scratch.path("downloads")
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)

        let cutOff = try PostgresClaimingQueue(
            queue: "fleet", connectionString: connection, owner: "cut-off", leaseDuration: .milliseconds(200))
        defer { cutOff.close() }
        _ = try cutOff.enqueue([task(url)])
        var claimed = try #require(try cutOff.claim(limit: 1).first).task
        claimed.temporaryFileName = ".peregrine-cut.part"
        claimed.receivedLength = 30_000
        claimed.expectedLength = 50_000
        claimed.resumeRecord = ResumeRecord(offset: 30_000, validator: .entityTag("\"v1\""), expectedLength: 50_000)
        #expect(try cutOff.renew([claimed]) == [url])
        // The whole file placed under its name, the temporary name still a link to it.
        try Data(body.allBytes).write(to: URL(fileURLWithPath: downloads + "/done.bin"))
        #expect(link(downloads + "/done.bin", downloads + "/.peregrine-cut.part") == 0)

        let heir = try service("heir", scratch: scratch, server: server, connection: connection)
        try await eventually("the heir finished the task") { heir.worker.statistics.finished == 1 }
        await heir.stop()
        #expect(server.requests(for: "/done.bin").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads) == ["done.bin"])
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: downloads + "/done.bin"))) == body.allBytes)
        let entry = try #require(try cutOff.entries([url])[url])
        #expect(entry.task.state == .finished)
        #expect(entry.task.fileName == "done.bin")
        #expect(try cutOff.finish([claimed]).isEmpty)
    }

    /// A service back after another took its task further: the queue's newer synced bytes win
    /// over the service's own older copy (deleted, with its partial file), and no partial file
    /// is left over.
    @Test func aReturningServiceContinuesFromTheNewestSyncedBytesNotItsOwnOlderCopy() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-fleet")
        defer { scratch.remove() }
        let (_, _, connection) = try await FleetPostgres.freshDatabase("newest")
        let server = MockServer()
        let body = MockBody.generated(seed: 8, count: 100_000)
        server.setRoute(.file(body, entityTag: .fixed("\"v1\"")), for: "/big.bin")
        let url = "http://mock.test/big.bin"
        let downloads = scratch.path("downloads")
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)

        // The returning service's own copy: stopped at 20,000 bytes, from an earlier lease.
        var configuration = DownloadManager.Configuration(
            downloadDirectory: downloads, stateDirectory: scratch.path("state-returning"),
            transport: MockTransport(server: server))
        configuration.maxDownloadCount = 8
        let manager = try DownloadManager(identifier: "returning", configuration: configuration)
        try Data(body.bytes(in: 0..<20_000)).write(to: URL(fileURLWithPath: scratch.path("old.part")))
        try manager.resumeOuterDownload(
            urlString: url, partialFile: scratch.path("old.part"), validator: .entityTag("\"v1\""),
            expectedLength: 100_000)
        let ownPartial = try #require(manager.task(url)?.record.temporaryFileName)

        // Another service took it to 60,000 bytes since, recorded them, and died.
        let other = try PostgresClaimingQueue(
            queue: "fleet", connectionString: connection, owner: "other", leaseDuration: .milliseconds(200))
        defer { other.close() }
        _ = try other.enqueue([task(url)])
        var claimed = try #require(try other.claim(limit: 1).first).task
        try Data(body.bytes(in: 0..<60_000)).write(to: URL(fileURLWithPath: downloads + "/other.part"))
        claimed.temporaryFileName = "other.part"
        claimed.receivedLength = 60_000
        claimed.expectedLength = 100_000
        claimed.resumeRecord = ResumeRecord(offset: 60_000, validator: .entityTag("\"v1\""), expectedLength: 100_000)
        #expect(try other.renew([claimed]) == [url])

        let returning = try service(
            "returning", scratch: scratch, server: server, connection: connection, manager: manager)
        try await eventually("the returning service finished the task") { returning.worker.statistics.finished == 1 }
        await returning.stop()
        let requests = server.requests(for: "/big.bin")
        #expect(requests.map { $0.headers["Range"] } == ["bytes=60000-"], "\(requests)")
        let file = try #require(manager.filePath(ofTask: url))
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: file))) == body.allBytes)
        let entries = try FileManager.default.contentsOfDirectory(atPath: downloads)
        #expect(entries == ["big.bin"], "partial files left: \(entries) (own: \(ownPartial))")
    }

    @Test func aServiceCutOffFromTheDatabaseStopsItsDownloadsAndAnotherFinishesThem() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-fleet")
        defer { scratch.remove() }
        let (postgres, database, connection) = try await FleetPostgres.freshDatabase("cutoff")
        let role = FleetPostgres.uniqueName("cut")
        try await postgres.psql(
            "CREATE ROLE \(role) LOGIN PASSWORD 'hunter2'; GRANT ALL ON SCHEMA public TO \(role)", database: database)
        let server = MockServer()
        for index in 0..<3 {
            server.setRoute(.file(.generated(seed: UInt64(index), count: 5000)), for: "/\(index).bin")
        }
        let urls = (0..<3).map { "http://mock.test/\($0).bin" }

        // The schema exists before the restricted role opens the queue.
        let adder = try PostgresClaimingQueue(queue: "fleet", connectionString: connection, owner: "adder")
        defer { adder.close() }
        try await postgres.psql(
            "GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role); GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role)",
            database: database)
        // Its transfers never move (a manual clock nobody advances): it holds its tasks until cut off.
        let cut = try service(
            "cut", scratch: scratch, server: server,
            connection: "postgresql://\(role):hunter2@127.0.0.1:\(postgres.port)/\(database)", mode: .manual,
            lease: .seconds(3), slots: 3)
        _ = try adder.enqueue(urls.map(task))
        try await eventually("the first service holds every task") { cut.worker.heldTasks.count == 3 }

        try await postgres.psql(
            "ALTER ROLE \(role) NOLOGIN; SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = '\(role)'",
            database: database)
        try await eventually("the cut-off service dropped its leases") { cut.worker.statistics.lost == 3 }
        let heir = try service("heir", scratch: scratch, server: server, connection: connection)
        try await eventually("the other service finished the tasks") { heir.worker.statistics.finished == 3 }

        #expect(cut.worker.statistics.finished == 0)
        #expect(cut.worker.statistics.failedCalls > 0)
        #expect(cut.worker.heldTasks.isEmpty)
        #expect(heir.worker.statistics.takenOver == 3)
        for index in 0..<3 {
            let file = try #require(heir.manager.filePath(ofTask: urls[index]))
            #expect(
                try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
                    == MockBody.generated(seed: UInt64(index), count: 5000).allBytes)
        }
        // Back on the database, it finds nothing to do and finishes nothing.
        try await postgres.psql("ALTER ROLE \(role) LOGIN", database: database)
        await heir.stop()
        await cut.stop()
        #expect(cut.worker.statistics.finished == 0 && cut.worker.statistics.refused == 0)
        #expect(
            try await postgres.psql(
                "SELECT count(*), max(claims) FROM peregrine_tasks WHERE store = 'fleet' AND state = 'finished'",
                database: database) == "3|2")
    }

    /// A client of any service pauses one task and removes another while this service holds
    /// them: it stops both at its next renewal, keeps the paused one (to resume it) and deletes
    /// the removed one; resumed, the paused task is claimed and runs again.
    @Test func tasksPausedOrRemovedElsewhereStopAtTheirHolder() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-fleet")
        defer { scratch.remove() }
        let (_, _, connection) = try await FleetPostgres.freshDatabase("control")
        let server = MockServer()
        for index in 0..<2 {
            server.setRoute(.file(.generated(seed: UInt64(index), count: 5000)), for: "/\(index).bin")
        }
        let urls = (0..<2).map { "http://mock.test/\($0).bin" }
        let client = try PostgresClaimingQueue(queue: "fleet", connectionString: connection, owner: "client")
        defer { client.close() }
        // Its transfers never move (a manual clock nobody advances): it holds its tasks.
        let holder = try service(
            "holder", scratch: scratch, server: server, connection: connection, mode: .manual,
            lease: .seconds(3), slots: 2)
        _ = try client.enqueue(urls.map(task))
        try await eventually("the service holds both tasks") { holder.worker.heldTasks.count == 2 }
        #expect(holder.manager.task(urls[1]) != nil)

        #expect(try client.control([urls[0]], .pause) == [urls[0]])
        #expect(try client.control([urls[1]], .remove) == [urls[1]])
        try await eventually("the holder let both go") { holder.worker.heldTasks.isEmpty }
        try await eventually("the removed task is deleted there") { holder.manager.task(urls[1]) == nil }
        let paused = try #require(holder.manager.task(urls[0]), "the paused task was deleted")
        #expect(paused.state != .downloading)

        #expect(try client.control([urls[0]], .resume) == [urls[0]])
        try await eventually("the resumed task is held again") { holder.worker.heldTasks.count == 1 }
        try await eventually("and runs") { holder.manager.task(urls[0])?.state == .downloading }
        await holder.stop()
    }

    /// A holder records its download speed at each renewal (``QueueMetaKey/speed``), for the
    /// other services' clients; a finished task's record carries none.
    @Test func aHolderRecordsItsSpeedAtEachRenewal() async throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-fleet")
        defer { scratch.remove() }
        let (_, _, connection) = try await FleetPostgres.freshDatabase("speed")
        let server = MockServer()
        // 64 MiB at 64 KiB/s of the mock's clock: 1,024 s, more than the polls below can advance
        // it before they give up, so the transfer still runs whenever the renewals come (a loaded
        // machine may run them late).
        server.setRoute(
            MockRoute.file(.generated(seed: 7, count: 64 << 20)).throttled(toBytesPerSecond: 64 * 1024),
            for: "/slow.bin")
        let url = "http://mock.test/slow.bin"
        let watcher = try PostgresClaimingQueue(queue: "fleet", connectionString: connection, owner: "watcher")
        defer { watcher.close() }
        // The transfer moves only as the test advances the mock's clock.
        let transport = MockTransport(server: server, mode: .manual)
        let holder = try service(
            "holder", scratch: scratch, server: server, connection: connection, lease: .seconds(3), slots: 1,
            transport: transport)
        _ = try watcher.enqueue([task(url)])
        try await eventually("the holder holds the task") { holder.worker.heldTasks.count == 1 }
        var seen: Int64 = 0
        try await eventually("the holder records a speed") {
            transport.advance(by: .milliseconds(100))
            guard let entry = try watcher.entries([url])[url] else { return false }
            if case .integer(let speed) = entry.task.metaInfo[QueueMetaKey.speed] { seen = speed }
            return seen > 0 || entry.task.state == .finished
        }
        #expect(seen > 0, "no speed was recorded while the task ran")
        try await eventually("the task finished") {
            transport.advance(by: .seconds(30))
            return holder.worker.statistics.finished == 1
        }
        #expect(try watcher.entries([url])[url]?.task.metaInfo[QueueMetaKey.speed] == nil)
        await holder.stop()
    }
}
