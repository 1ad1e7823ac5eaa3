import Foundation
import PeregrinePostgresStorage
import PeregrineStorageTestKit
import TestSupport
import Testing

/// What the store does when the database is not there, refuses the login, or goes away while
/// running — and that no message ever shows the password.
@Suite("PostgreSQL failures")
struct PostgresFailureTests {
    /// Every text a caller could print of an error.
    private func texts(_ error: StoreError) -> [String] {
        [error.description, error.message, error.path ?? "", String(reflecting: error), "\(error)"]
    }

    @Test func theConnectionStringIsParsedAndPrintedWithoutItsPassword() throws {
        let location = try PostgresStoreLocation(
            parsing: "postgresql://alice:p%40ss%3Aword@db.example:6543/queue?connect_timeout=3&application_name=svc")
        #expect(location.endpoint == .tcp(host: "db.example", port: 6543))
        #expect(location.username == "alice")
        #expect(location.password == "p@ss:word")
        #expect(location.database == "queue")
        #expect(location.connectTimeout == .seconds(3))
        #expect(location.applicationName == "svc")
        #expect(location.description == "postgresql://alice:***@db.example:6543/queue")

        let socket = try PostgresStoreLocation(parsing: "postgresql://bob@/jobs?host=/run/postgresql&port=5433")
        #expect(socket.endpoint == .unixSocket(directory: "/run/postgresql", port: 5433))
        #expect(socket.password == nil)
        #expect(socket.description == "postgresql://bob@/jobs?host=/run/postgresql&port=5433")

        #expect(
            PostgresStoreLocation.redact("postgres://u:hunter2@h/d?password=hunter2&x=1")
                == "postgres://u:***@h/d?password=***&x=1")
    }

    @Test(arguments: [
        "mysql://u:hunter2@h/d", "postgresql://u:hunter2@h:99999/d", "postgresql://u:hunter2@h/d?bogus=1",
        "postgresql://:hunter2@h/d", "postgresql://u:hunter2@h/d?sslmode=require", "postgresql://u:hunter2%zz@h/d",
    ])
    func aBadConnectionStringIsRefusedWithoutShowingThePassword(_ string: String) throws {
        let error = #expect(throws: StoreError.self) { try PostgresStoreLocation(parsing: string) }
        #expect(error?.code == .invalidConfiguration)
        for text in texts(error!) { #expect(!text.contains("hunter2"), "\(text)") }
    }

    @Test func aDatabaseThatIsDownAtStartIsAClearErrorWithoutThePassword() throws {
        let port = try FreePort.pick()
        let connection = "postgresql://peregrine:hunter2@127.0.0.1:\(port)/queue?connect_timeout=5"
        let error = #expect(throws: StoreError.self) {
            try PostgresTaskStore(identifier: "down", connectionString: connection)
        }
        #expect(error?.code == .unavailable)
        #expect(error?.path == "postgresql://peregrine:***@127.0.0.1:\(port)/queue")
        #expect(error?.message.contains("cannot connect to") == true)
        for text in texts(error!) { #expect(!text.contains("hunter2"), "\(text)") }
    }

    @Test func aWrongPasswordOrAMissingDatabaseIsUnavailableWithoutThePassword() async throws {
        let server = try await SharedPostgres.server()
        for connection in [
            "postgresql://\(server.username):wrong-hunter2@127.0.0.1:\(server.port)/postgres",
            server.connectionString(database: "no_such_database"),
        ] {
            let error = #expect(throws: StoreError.self) {
                try PostgresTaskStore(identifier: "login", connectionString: connection)
            }
            #expect(error?.code == .unavailable)
            for text in texts(error!) {
                #expect(!text.contains("hunter2") && !text.contains(server.password), "\(text)")
            }
        }
    }

    @Test func aTerminatedBackendIsATypedErrorAndTheNextCallConnectsAgain() async throws {
        let application = SharedPostgres.uniqueName("victim")
        let (server, database, connection) = try await SharedPostgres.freshDatabase(
            "terminate", applicationName: application)
        let store = try PostgresTaskStore(identifier: "victim", connectionString: connection)
        defer { try? store.close() }
        try store.record([.putTask(StoreFixtures.task(1))])

        // Hold a lock the store's next write needs, so that write is on the wire, waiting, when
        // its backend is terminated: the failure is certain, not a race with the close. The lock
        // is held for longer than any run (the test ends it), however slow the machine.
        let holder = Task {
            try await server.psql(
                "BEGIN; LOCK TABLE peregrine_tasks IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600); COMMIT",
                database: database)
        }
        try await waitUntil(
            server, database,
            "SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' AND relation = 'peregrine_tasks'::regclass"
        )
        let write = Task.detached { () -> StoreError? in
            do throws(StoreError) {
                try store.record([.putTask(StoreFixtures.task(2))])
                return nil
            } catch {
                return error
            }
        }
        try await waitUntil(
            server, database,
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(application)' AND wait_event_type = 'Lock'"
        )
        try await server.psql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(application)'",
            database: database)
        let error = await write.value
        #expect(error?.code == .unavailable, "\(String(describing: error))")
        for text in error.map(texts) ?? [] { #expect(!text.contains(server.password)) }
        holder.cancel()
        try await server.psql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()",
            database: database)
        _ = await holder.result

        // The caller still has the change; recording it again reaches the database.
        try store.record([.putTask(StoreFixtures.task(2))])
        #expect(store.statistics.reconnections == 1)
        #expect(try store.load().tasks == [StoreFixtures.task(1), StoreFixtures.task(2)])

        // Terminated while idle: the next call notices and connects again, or fails typed once.
        try await server.psql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(application)'",
            database: database)
        do {
            try store.record([.putTask(StoreFixtures.task(3))])
        } catch {
            #expect(error.code == .unavailable)
            try store.record([.putTask(StoreFixtures.task(3))])
        }
        #expect(try store.load().tasks.map(\.urlString) == (1...3).map { StoreFixtures.task($0).urlString })
    }

    /// Polls a count query until it is positive (at most 120 s: psql starts slowly on a loaded machine).
    private func waitUntil(_ server: PostgresServer, _ database: String, _ countQuery: String) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(120)
        while clock.now < deadline {
            if let count = Int(try await server.psql(countQuery, database: database)), count > 0 { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("timed out waiting for: \(countQuery)")
    }
}

/// A network that drops packets without resetting anything, between a queue and PostgreSQL
/// (`Tests/Tools/blackhole_proxy.py`, told "cut" and "open" on its input): a call waits for no
/// answer past its deadline (a third of the lease, at least 5 s), fails as a lost connection
/// does, and once the network forwards again the next call connects again and works.
@Suite("PostgreSQL behind a network that drops packets")
struct PostgresPartitionTests {
    @Test func aCallPastItsDeadlineFailsAsALostConnectionAndTheNextConnectsAgain() async throws {
        let (server, _, connection) = try await SharedPostgres.freshDatabase("partition")
        let proxy = try await BlackholeProxy(to: server.port)
        defer { proxy.stop() }
        let throughProxy = connection.replacingOccurrences(of: ":\(server.port)/", with: ":\(proxy.port)/")
        let queue = try PostgresClaimingQueue(
            queue: "cut", connectionString: throughProxy, owner: "cut-off", leaseDuration: .seconds(3))
        defer { queue.close() }
        _ = try queue.enqueue([
            StoredTask(urlString: "https://example.org/a", receivedLength: 0, state: .pending, addedAt: Date())
        ])

        try await proxy.cut()
        // On a thread of its own: the call blocks its thread. Bounded by the deadline, not by
        // this test: a call that hung would hang the test.
        let started = ContinuousClock.now
        let cutOff = try await onThreadOfItsOwn { () -> StoreError? in
            do throws(StoreError) {
                _ = try queue.claim(limit: 1)
                return nil
            } catch {
                return error
            }
        }
        print("partition: the call failed after \(ContinuousClock.now - started): \(cutOff?.message ?? "no error")")
        #expect(cutOff?.code == .unavailable, "\(String(describing: cutOff))")
        #expect(cutOff?.message.contains("no answer within") == true, "\(String(describing: cutOff))")
        // Callers that must answer in time (RPC clients) see it without waiting for the database.
        #expect(queue.reachability.failingSince != nil)
        #expect(queue.reachability.callStartedAt == nil)

        try await proxy.open()
        let claimed = try await onThreadOfItsOwn { () -> [TaskLease] in
            var lastError: StoreError?
            for _ in 0..<50 {
                do throws(StoreError) {
                    return try queue.claim(limit: 1)
                } catch {
                    lastError = error
                    usleep(100_000)
                }
            }
            throw lastError ?? StoreError(.unavailable, path: nil, "no claim")
        }
        #expect(claimed.map(\.task.urlString) == ["https://example.org/a"])
        #expect(queue.reachability == QueueReachability())
    }
}

/// Runs blocking work on a thread of its own, so that no cooperative thread is held.
private func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
