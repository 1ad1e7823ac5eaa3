import Foundation
import Logging
import NIOPosix
import PeregrineStorageTestKit
import TestSupport
import Testing

@testable import PeregrinePostgresStorage

/// A service frozen in the middle of a claim (stopped, its VM paused, cut off without a reset)
/// holds the queue's turn for claims: the database ends that transaction, and the others claim
/// again, rather than wait for the frozen one for ever.
@Suite("PostgreSQL queue with a frozen claimer")
struct FrozenClaimerTests {
    @Test func aClaimerFrozenInItsTransactionDoesNotStopTheOthers() async throws {
        let (_, _, connection) = try await SharedPostgres.freshDatabase("frozen-claimer")
        let live = try PostgresClaimingQueue(queue: "q", connectionString: connection, owner: "live")
        defer { live.close() }
        // With a limit, every claim of the queue takes its turn (an advisory lock).
        try live.setLimits(PostgresClaimingQueue.Limits(maxConnectionsPerOrigin: 4))
        _ = try live.enqueue([
            StoredTask(urlString: "https://a.example/f.bin", receivedLength: 0, state: .pending, addedAt: Date())
        ])

        // A session made as every session of the store is, frozen after the first statements of
        // a claim: it took the queue's turn and sends nothing more.
        let group = MultiThreadedEventLoopGroup.singleton
        let frozen = try PostgresSession.connect(
            to: try PostgresStoreLocation(parsing: connection), on: group.next(), logger: Logger(label: "frozen"))
        defer { frozen.close() }
        // (Blocking calls of a moment, as every test of the store makes.)
        _ = try frozen.query("BEGIN", doing: "cannot begin in")
        _ = try frozen.query(
            "SELECT pg_advisory_xact_lock(\(PostgresClaimingQueue.claimLockClass), hashtext('q'))",
            doing: "cannot take the claim lock in")

        // The live service claims the task once the database ended the frozen transaction (its
        // claims time out and try again meanwhile). A hang guard, not a timing: nothing is
        // claimed at all when the frozen transaction holds on.
        // Each claim blocks for up to its 5 s deadline: on a thread of its own, not the pool's.
        let claimed = try await onOwnThread { () -> [TaskLease] in
            let deadline = ContinuousClock.now + .seconds(120)
            var claimed: [TaskLease] = []
            while claimed.isEmpty, ContinuousClock.now < deadline {
                claimed = (try? live.claim(limit: 1)) ?? []
                if claimed.isEmpty { usleep(200_000) }
            }
            return claimed
        }
        #expect(claimed.map(\.task.urlString) == ["https://a.example/f.bin"])
    }
}
