import Foundation
import PeregrineCore
import PeregrinePostgresStorage
import PeregrineStorageTestKit
import Synchronization
import TestSupport
import Testing

/// Limits that hold across every owner of one queue (issue 20): downloads per list and
/// connections per origin, counted over the leases running in the database.
@Suite("PostgreSQL shared queue limits")
struct PostgresQueueLimitsTests {
    /// Task `index` at `origin`, in `list`; added in index order.
    private func task(_ index: Int, origin: String, list: String = "") -> StoredTask {
        var task = StoredTask(
            urlString: "\(origin)/files/\(index).bin", receivedLength: 0, state: .pending,
            addedAt: Date(timeIntervalSinceReferenceDate: Double(index)))
        task.list = list
        return task
    }

    private func ended(_ leases: [TaskLease]) -> [StoredTask] {
        leases.map { lease in
            var task = lease.task
            task.state = .finished
            return task
        }
    }

    private func origins(_ leases: [TaskLease]) -> [String: Int] {
        leases.reduce(into: [:]) { counts, lease in
            counts[
                String(lease.task.urlString.prefix { $0 != "/" }) + "//" + Self.host(lease.task.urlString), default: 0] +=
                1
        }
    }

    /// The host part of `url` (after `://`, up to the next `/`).
    private static func host(_ url: String) -> String {
        guard let start = url.range(of: "://")?.upperBound else { return url }
        return String(url[start...].prefix { $0 != "/" })
    }

    @Test func claimsStayWithinTheConnectionsPerOriginOfAllOwners() async throws {
        let (server, database, connection) = try await SharedPostgres.freshDatabase("origin-limits")
        let narrow = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "narrow")
        let wide = try PostgresClaimingQueue(
            queue: "q", connectionString: connection, owner: "wide", connectionsPerTask: 2)
        defer {
            narrow.close()
            wide.close()
        }
        #expect(try narrow.limits() == PostgresClaimingQueue.Limits())
        // Six tasks at each of two origins, interleaved; user information and case do not make
        // another origin.
        var all: [StoredTask] = []
        for index in 0..<12 {
            all.append(
                task(index, origin: index.isMultiple(of: 2) ? "https://a.example" : "https://user:pw@A.example:8443"))
        }
        _ = try narrow.enqueue(all)
        #expect(
            try await server.psql(
                "SELECT DISTINCT origin FROM peregrine_tasks WHERE store = 'q' ORDER BY origin", database: database)
                == "https://a.example\nhttps://a.example:8443")
        try wide.setLimits(PostgresClaimingQueue.Limits(maxConnectionsPerOrigin: 3))
        #expect(try narrow.limits() == PostgresClaimingQueue.Limits(maxConnectionsPerOrigin: 3))

        // One connection a task: three of each origin, the oldest.
        let first = try narrow.claim(limit: 50)
        #expect(first.map(\.task.urlString) == all.prefix(6).map(\.urlString))
        // Both origins are full for anyone.
        #expect(try wide.claim(limit: 50).isEmpty)
        #expect(try narrow.claim(limit: 50).isEmpty)
        // Two tasks of the first origin end: two connections free there, one task of the wide owner's fits.
        let firstOrigin = first.filter { $0.task.urlString.hasPrefix("https://a.example/") }
        #expect(try narrow.finish(ended(Array(firstOrigin.prefix(2)))).count == 2)
        let wideClaim = try wide.claim(limit: 50)
        #expect(wideClaim.map(\.task.urlString) == [all[6].urlString])
        #expect(try narrow.claim(limit: 50).isEmpty, "3 connections held at each origin")
        // Without the limit, every waiting task is claimable again.
        try narrow.setLimits(PostgresClaimingQueue.Limits())
        #expect(try narrow.claim(limit: 50).count == 5)
        #expect(
            try await server.psql(
                "SELECT max_downloads IS NULL AND max_connections_per_origin IS NULL FROM peregrine_queues"
                    + " WHERE store = 'q'", database: database) == "t")
    }

    @Test func claimsStayWithinTheDownloadsPerListAndExpiredLeasesDoNotCount() async throws {
        let (_, _, connection) = try await SharedPostgres.freshDatabase("list-limits")
        let dying = try PostgresClaimingQueue(
            queue: "q", connectionString: connection, owner: "dying", leaseDuration: .milliseconds(300))
        let heir = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "heir")
        defer {
            dying.close()
            heir.close()
        }
        _ = try heir.enqueue((0..<8).map { task($0, origin: "http://h\($0).example", list: $0 < 4 ? "x" : "y") })
        try heir.setLimits(PostgresClaimingQueue.Limits(maxDownloads: 2))
        let held = try dying.claim(limit: 50)
        #expect(held.map { $0.task.list } == ["x", "x", "y", "y"])
        #expect(try heir.claim(limit: 50).isEmpty)
        // The dying owner's leases run out: its places are free, its tasks claimable first.
        try await Task.sleep(for: .milliseconds(600))
        let taken = try heir.claim(limit: 50)
        #expect(taken.count == 4)
        #expect(Set(taken.map(\.task.urlString)) == Set(held.map(\.task.urlString)))
        #expect(taken.allSatisfy { $0.previousOwner == "dying" })
        // Its renewal and finishing are refused: the places are the heir's now.
        #expect(try dying.renew(held.map(\.task)).isEmpty)
        #expect(try dying.finish(ended(held)).isEmpty)
        // Limits below 1 are refused.
        #expect(throws: StoreError.self) { try heir.setLimits(PostgresClaimingQueue.Limits(maxDownloads: 0)) }
    }

    /// Six owners claim and finish 240 tasks of two origins at once under a limit of 2
    /// connections per origin, all of them claiming again the moment they find nothing. Each owner counts what it holds from the moment its claim
    /// returns to the moment it sends the finish: a subset in time of what the database
    /// counts, so a count over the limit here is one in the database.
    @Test func concurrentOwnersNeverExceedTheLimitTogether() async throws {
        let (server, database, connection) = try await SharedPostgres.freshDatabase("limits-race")
        let owners = try (0..<6).map { number in
            try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "owner-\(number)")
        }
        defer { for owner in owners { owner.close() } }
        let origins = ["http://one.example", "http://two.example"]
        let count = 240
        _ = try owners[0].enqueue((0..<count).map { task($0, origin: origins[$0 % 2]) })
        let cap = 2
        try owners[0].setLimits(PostgresClaimingQueue.Limits(maxConnectionsPerOrigin: cap))
        let tally = Tally()
        let finished = try await withThrowingTaskGroup(of: Int.self) { group in
            for owner in owners {
                group.addTask {
                    var done = 0
                    var idle = 0
                    // A hang guard, not a timing: 100,000 empty claims.
                    while tally.total.load(ordering: .relaxed) < count, idle < 100_000 {
                        let leases = try owner.claim(limit: 2)
                        if leases.isEmpty {
                            idle += 1
                            await Task.yield()
                            continue
                        }
                        let counts = self.origins(leases)
                        tally.holding.withLock { holding in
                            for (origin, number) in counts {
                                holding[origin, default: 0] += number
                                tally.highest.withLock { $0 = max($0, holding[origin]!) }
                            }
                        }
                        try await Task.sleep(for: .milliseconds(3))
                        tally.holding.withLock { holding in
                            for (origin, number) in counts { holding[origin]! -= number }
                        }
                        let ended = try owner.finish(self.ended(leases)).count
                        done += ended
                        tally.total.add(ended, ordering: .relaxed)
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(finished == count)
        let most = tally.highest.withLock { $0 }
        #expect(most <= cap, "\(most) connections to one origin at once")
        #expect(most >= 1)
        #expect(
            try await server.psql(
                "SELECT count(*), max(claims) FROM peregrine_tasks WHERE store = 'q' AND state = 'finished'",
                database: database) == "\(count)|1")
    }
}

/// What concurrent owners hold, by origin, as they see it.
private final class Tally: Sendable {
    let holding = Locked<[String: Int]>([:])
    let highest = Locked(0)
    let total = Atomic(0)
}
