import Foundation
import PeregrinePostgresStorage
import PeregrineStorageTestKit
import TestSupport
import Testing

/// Several owners (services) sharing one queue in one database: claims under leases, take-over
/// of expired leases, finishing exactly once, wake-ups through LISTEN/NOTIFY (issue 20).
@Suite("PostgreSQL shared queue")
struct PostgresClaimingQueueTests {
    private func tasks(_ range: ClosedRange<Int>) -> [StoredTask] {
        range.map { StoreFixtures.task($0) }
    }

    /// A census's counts: waiting, held, ended.
    private func counts(_ census: QueueCensus) -> [Int] { [census.waiting, census.held, census.ended] }

    private func finished(_ leases: [TaskLease]) -> [StoredTask] {
        leases.map { lease in
            var task = lease.task
            task.state = .finished
            task.receivedLength = task.expectedLength ?? 0
            return task
        }
    }

    /// Claims until `body` says stop or `deadline` passes, waiting for work between empty claims.
    private func claimUntil(
        _ queue: PostgresClaimingQueue, within deadline: Duration = .seconds(120),
        _ body: ([TaskLease]) throws -> Bool
    ) async throws {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        while clock.now < end {
            let leases = try queue.claim(limit: 50)
            if try body(leases) { return }
            if leases.isEmpty { _ = await queue.waitForWork(timeout: .milliseconds(50)) }
        }
        Issue.record("the claims did not end within \(deadline)")
    }

    @Test func everyTaskIsFinishedExactlyOnceByConcurrentOwners() async throws {
        let (server, database, connection) = try await SharedPostgres.freshDatabase("claims")
        let owners = try (0..<4).map { number in
            try PostgresClaimingQueue(queue: "shared", connectionString: connection, owner: "service-\(number)")
        }
        defer { for owner in owners { owner.close() } }
        let count = 1000
        #expect(try owners[0].enqueue(tasks(1...count)).count == count)
        // A second addition of queued URLs adds nothing.
        #expect(try owners[1].enqueue(tasks(1...10)).isEmpty)

        let finishedByOwner = try await withThrowingTaskGroup(of: [String].self) { group in
            for owner in owners {
                group.addTask {
                    var finished: [String] = []
                    while true {
                        let leases = try owner.claim(limit: 50)
                        if leases.isEmpty { return finished }
                        #expect(leases.allSatisfy { $0.attempt == 1 && $0.previousOwner == nil })
                        let ended = try owner.finish(self.finished(leases))
                        #expect(ended == Set(leases.map(\.task.urlString)))
                        finished += ended
                    }
                }
            }
            return try await group.reduce(into: [[String]]()) { $0.append($1) }
        }
        let all = finishedByOwner.flatMap { $0 }
        #expect(all.count == count)
        #expect(Set(all) == Set(tasks(1...count).map(\.urlString)))
        #expect(
            try await server.psql(
                "SELECT count(*), max(claims) FROM peregrine_tasks WHERE store = 'shared' AND state = 'finished'",
                database: database) == "\(count)|1")
        // Nothing is left to claim, and a finished task cannot be finished again.
        #expect(try owners[2].claim(limit: 50).isEmpty)
        #expect(try owners[3].finish(tasks(1...5)).isEmpty)
    }

    @Test func aDeadOwnersLeasesExpireAndAnotherResumesFromTheRecordedOffset() async throws {
        let (_, _, connection) = try await SharedPostgres.freshDatabase("takeover")
        let dead = try PostgresClaimingQueue(
            queue: "q", connectionString: connection, owner: "dead", leaseDuration: .milliseconds(200))
        let heir = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "heir")
        defer {
            dead.close()
            heir.close()
        }
        _ = try heir.enqueue(tasks(1...3))
        let claimed = try dead.claim(limit: 10)
        #expect(claimed.map(\.task.urlString).sorted() == tasks(1...3).map(\.urlString).sorted())
        var progressed = claimed[0].task
        progressed.receivedLength = 500
        #expect(try dead.renew([progressed]) == [progressed.urlString])

        // The owner stops renewing (killed, frozen, cut off): its leases expire and the heir takes them.
        var taken: [TaskLease] = []
        try await claimUntil(heir) { leases in
            taken += leases
            return taken.count == 3
        }
        #expect(taken.allSatisfy { $0.previousOwner == "dead" && $0.attempt == 2 })
        #expect(taken.first { $0.task.urlString == progressed.urlString }?.task.receivedLength == 500)

        // The old owner comes back: it holds nothing, and cannot finish or release what it lost.
        #expect(try dead.renew(claimed.map(\.task)).isEmpty)
        #expect(try dead.finish(finished(claimed)).isEmpty)
        #expect(try dead.release(claimed.map(\.task)).isEmpty)
        #expect(try heir.finish(finished(taken)) == Set(taken.map(\.task.urlString)))
    }

    @Test func anOwnerCutOffFromTheDatabaseDoesNotFinishATaskAnotherTook() async throws {
        let application = SharedPostgres.uniqueName("cutoff")
        let (server, database, connection) = try await SharedPostgres.freshDatabase(
            "cutoff", applicationName: application)
        let otherConnection = server.connectionString(database: database)
        let cut = try PostgresClaimingQueue(
            queue: "q", connectionString: connection, owner: "cut", leaseDuration: .milliseconds(200))
        let other = try PostgresClaimingQueue(queue: "q", connectionString: otherConnection, owner: "other")
        defer {
            cut.close()
            other.close()
        }
        _ = try other.enqueue(tasks(1...5))
        let claimed = try cut.claim(limit: 10)
        #expect(claimed.count == 5)

        let terminated = try await server.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '\(application)'",
            database: database)
        #expect(terminated == "2")  // the working connection and the listening one

        // Its next call fails typed, or connects again; either way its leases are not its own
        // once they expired and the other owner took them.
        var taken: [TaskLease] = []
        try await claimUntil(other) { leases in
            taken += leases
            return taken.count == 5
        }
        #expect(taken.allSatisfy { $0.previousOwner == "cut" })
        do {
            #expect(try cut.finish(finished(claimed)).isEmpty)
        } catch {
            #expect(error.code == .unavailable)
            #expect(!error.description.contains(server.password))
            #expect(try cut.finish(finished(claimed)).isEmpty)
        }
        #expect(try cut.claim(limit: 10).isEmpty)
        #expect(try other.finish(finished(taken)).count == 5)
        #expect(
            try await server.psql(
                "SELECT count(*) FROM peregrine_tasks WHERE store = 'q' AND state = 'finished'", database: database)
                == "5")
    }

    @Test func anIdleOwnerWakesWhenAnotherAddsWork() async throws {
        let (_, _, connection) = try await SharedPostgres.freshDatabase("wake")
        let idle = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "idle")
        let adder = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "adder")
        let elsewhere = try PostgresClaimingQueue(queue: "other", connectionString: connection, owner: "elsewhere")
        defer {
            idle.close()
            adder.close()
            elsewhere.close()
        }
        #expect(try idle.claim(limit: 10).isEmpty)
        // Work added to another queue does not wake this one (the wait times out: false).
        _ = try elsewhere.enqueue(tasks(1...1))
        #expect(await idle.waitForWork(timeout: .milliseconds(300)) == false)
        let woke = Task { await idle.waitForWork(timeout: .seconds(600)) }
        _ = try adder.enqueue(tasks(1...2))
        #expect(await woke.value)
        #expect(try idle.claim(limit: 10).count == 2)
    }

    @Test func releasedTasksGoBackToTheQueueWithTheirProgress() async throws {
        let (_, _, connection) = try await SharedPostgres.freshDatabase("release")
        let first = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "first")
        let second = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "second")
        defer {
            first.close()
            second.close()
        }
        _ = try first.enqueue(tasks(1...2))
        var held = try first.claim(limit: 10).map(\.task)
        #expect(try second.claim(limit: 10).isEmpty)
        held[0].receivedLength = 123
        #expect(try first.release(held) == Set(held.map(\.urlString)))
        let again = try second.claim(limit: 10)
        #expect(again.count == 2)
        #expect(again.allSatisfy { $0.previousOwner == nil && $0.attempt == 2 })
        #expect(again.first { $0.task.urlString == held[0].urlString }?.task.receivedLength == 123)
    }

    @Test func aTaskAddedPausedIsClaimedOnlyOnceResumed() async throws {
        let (_, _, connection) = try await SharedPostgres.freshDatabase("paused")
        let queue = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "only")
        defer { queue.close() }
        var paused = StoreFixtures.task(1)
        paused.state = .paused
        #expect(try queue.enqueue([paused, StoreFixtures.task(2)]).count == 2)
        #expect(try queue.entries([paused.urlString])[paused.urlString]?.task.state == .paused)
        #expect(try queue.claim(limit: 10).map(\.task.urlString) == [StoreFixtures.task(2).urlString])
        #expect(try queue.claim(limit: 10).isEmpty)
        #expect(try queue.control([paused.urlString], .resume) == [paused.urlString])
        #expect(try queue.claim(limit: 10).map(\.task.urlString) == [paused.urlString])
    }

    /// What every owner sees without claiming: pages of waiting, held and ended tasks (aria2's
    /// paging, negative offsets included), the counts, and the endings in the order they
    /// happened, with a wake-up for a follower when another owner finishes.
    @Test func everyOwnerSeesTheQueueAndFollowsItsEndings() async throws {
        let (_, _, connection) = try await SharedPostgres.freshDatabase("views")
        let worker = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "worker")
        let watcher = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "watcher")
        defer {
            worker.close()
            watcher.close()
        }
        let all = tasks(1...6)
        _ = try worker.enqueue(all)
        let start = try watcher.endings(after: nil, limit: 0)
        #expect(start.tasks.isEmpty)
        let held = try worker.claim(limit: 2)
        func urls(_ entries: [QueuedTask]) -> [String] { entries.map(\.task.urlString) }
        #expect(try counts(watcher.census()) == [4, 2, 0])
        #expect(try urls(watcher.page(.waiting, offset: 0, count: 10)) == all[2...].map(\.urlString))
        #expect(try urls(watcher.page(.waiting, offset: 1, count: 2)) == [all[3], all[4]].map(\.urlString))
        #expect(try urls(watcher.page(.waiting, offset: -1, count: 2)) == [all[5], all[4]].map(\.urlString))
        #expect(try watcher.page(.waiting, offset: -5, count: 2).isEmpty)
        let heldPage = try watcher.page(.held, offset: 0, count: 10)
        #expect(urls(heldPage) == held.map(\.task.urlString))
        #expect(heldPage.allSatisfy { $0.holder == "worker" })

        // Ended one at a time, the second claimed first: endings come in the order they happened.
        let woke = Task { await watcher.waitForEndings(timeout: .seconds(600)) }
        #expect(try worker.finish(finished([held[1]])).count == 1)
        #expect(await woke.value)
        #expect(try worker.finish(finished([held[0]])).count == 1)
        let ended = try watcher.endings(after: start.cursor, limit: 10)
        #expect(urls(ended.tasks) == [held[1], held[0]].map(\.task.urlString))
        #expect(ended.tasks.allSatisfy { $0.task.state == .finished })
        #expect(try watcher.endings(after: ended.cursor, limit: 10).tasks.isEmpty)
        let firstOnly = try watcher.endings(after: start.cursor, limit: 1)
        #expect(urls(firstOnly.tasks) == [held[1].task.urlString])
        #expect(try urls(watcher.endings(after: firstOnly.cursor, limit: 10).tasks) == [held[0].task.urlString])
        #expect(try urls(watcher.page(.ended, offset: 0, count: 10)) == [held[1], held[0]].map(\.task.urlString))
        #expect(try urls(watcher.page(.ended, offset: -1, count: 1)) == [held[0].task.urlString])
        #expect(try counts(watcher.census()) == [4, 0, 2])
    }

    /// Any owner pauses, resumes and removes tasks whoever holds them: the holder's next
    /// renewal answers without them, a paused task is listed as waiting but never claimed, a
    /// removed URL may be added again, an ended task is left alone.
    @Test func anyOwnerPausesResumesAndRemovesTasksWhoeverHoldsThem() async throws {
        let (_, _, connection) = try await SharedPostgres.freshDatabase("control")
        let worker = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "worker")
        let client = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "client")
        defer {
            worker.close()
            client.close()
        }
        let all = tasks(1...3)
        let (one, two, three) = (all[0].urlString, all[1].urlString, all[2].urlString)
        _ = try worker.enqueue(all)
        let held = try worker.claim(limit: 2).map(\.task)
        #expect(held.map(\.urlString) == [one, two])
        #expect(try client.control([one, three], .pause) == [one, three])
        #expect(try worker.renew(held) == [two], "the holder lost the paused task")
        #expect(try counts(client.census()) == [2, 1, 0])
        let waiting = try client.page(.waiting, offset: 0, count: 10)
        #expect(waiting.map(\.task.urlString) == [one, three])
        #expect(waiting.allSatisfy { $0.task.state == .paused && $0.holder == nil })
        #expect(try worker.claim(limit: 10).isEmpty, "a paused task is not claimed")
        #expect(try client.control([one], .resume) == [one])
        #expect(try client.control([one], .resume).isEmpty, "resumed once")
        #expect(try worker.claim(limit: 10).map(\.task.urlString) == [one])

        #expect(try client.control([two], .remove) == [two])
        #expect(try worker.renew([held[1]]).isEmpty)
        var gone = held[1]
        gone.state = .finished
        #expect(try worker.finish([gone]).isEmpty, "a removed task is not finished")
        #expect(try client.entries([two]).isEmpty)
        #expect(try client.enqueue([all[1]]) == [two], "a removed URL may be added again")

        // The held task ends; then it is left alone.
        var ended = held[0]
        ended.state = .finished
        #expect(try worker.finish([ended]) == [one])
        #expect(try client.control([one], .pause).isEmpty)
        #expect(try client.control([one], .remove).isEmpty)
        #expect(try client.entries([one])[one]?.task.state == .finished)
    }

    /// The queue as one list (every task in the order added), a census that tells additions
    /// and removals apart from changes of state, pausing and resuming every task at once, and
    /// retrying a failed task, which any owner may then claim.
    @Test func everyTaskAtOnceAndRetriesOfFailedOnes() async throws {
        let (_, _, connection) = try await SharedPostgres.freshDatabase("whole")
        let worker = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "worker")
        let client = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "client")
        defer {
            worker.close()
            client.close()
        }
        #expect(try client.census().newestAddition == 0)
        let all = tasks(1...5)
        let urls = all.map(\.urlString)
        _ = try worker.enqueue(all)
        let added = try client.census().newestAddition
        #expect(added > 0)
        let held = try worker.claim(limit: 3).map(\.task)
        var failed = held[0]
        failed.state = .failed(FailureReason(.unknown, message: "refused"))
        var done = held[1]
        done.state = .finished
        #expect(try worker.finish([failed, done]) == [urls[0], urls[1]])
        // The whole queue in the order added, whatever each task's phase; claims and endings
        // leave the newest addition as it was.
        let whole = try client.page(.all, offset: 0, count: 10)
        #expect(whole.map(\.task.urlString) == urls)
        #expect(whole.map { $0.holder } == [nil, nil, "worker", nil, nil])
        #expect(try client.page(.all, offset: -1, count: 2).map(\.task.urlString) == [urls[4], urls[3]])
        #expect(try client.census().newestAddition == added)

        // Pause all: the waiting and the held task, not the ended ones; the holder loses it.
        #expect(try client.controlAll(.pause) == [urls[2], urls[3], urls[4]])
        #expect(try worker.renew([held[2]]).isEmpty)
        #expect(try worker.claim(limit: 10).isEmpty)
        #expect(try client.controlAll(.pause).isEmpty)
        #expect(try client.controlAll(.resume) == [urls[2], urls[3], urls[4]])

        // A failed task waits again (with its progress) and is claimed; a finished one is left.
        #expect(try client.control([urls[0], urls[1]], .retry) == [urls[0]])
        #expect(try client.entries([urls[0]])[urls[0]]?.task.state == .pending)
        #expect(try counts(client.census()) == [4, 0, 1])
        #expect(try worker.claim(limit: 10).map(\.task.urlString) == [urls[0], urls[2], urls[3], urls[4]])

        // A removal and an addition of as many tasks: the count is the same, the newest
        // addition is not.
        #expect(try client.control([urls[4]], .remove) == [urls[4]])
        _ = try client.enqueue([StoreFixtures.task(6)])
        #expect(try client.census().total == 5)
        #expect(try client.census().newestAddition > added)

        // A result forgotten: the finished task leaves the queue; a waiting one is not a result.
        #expect(try client.control([urls[1], urls[2]], .forget) == [urls[1]])
        #expect(try client.entries([urls[1]]).isEmpty)
        #expect(try client.enqueue([all[1]]) == [urls[1]], "a forgotten URL may be added again")
    }
}
