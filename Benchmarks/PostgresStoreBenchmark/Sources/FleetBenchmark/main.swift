import Foundation
// Issue 20, P10: claim-and-finish throughput of zero-byte tasks through one shared PostgreSQL
// queue (PostgresClaimingQueue), with N services, each its own queue object (its own
// connections and event loop) on a thread of its own, claiming batches and finishing each batch
// in one statement. No transfer is made: this measures the queue, the part all services share.
//
// Usage:
//   FleetBenchmark --postgres postgresql://… [--services 4] [--tasks 20000] [--batch 50] [--queue NAME]
// Prints: services N tasks T seconds S tasks/s R claims C
import PeregrinePostgresStorage
import PeregrineStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String) -> Never {
    let line = Array("FleetBenchmark: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

var options: [String: String] = [:]
let arguments = Array(CommandLine.arguments.dropFirst())
var index = 0
while index + 1 < arguments.count {
    options[String(arguments[index].dropFirst(2))] = arguments[index + 1]
    index += 2
}
guard let connection = options["postgres"] else { fail("--postgres is required") }
let serviceCount = Int(options["services"] ?? "4") ?? 4
let taskCount = Int(options["tasks"] ?? "20000") ?? 20_000
let batch = Int(options["batch"] ?? "50") ?? 50
let queueName = options["queue"] ?? "p10-\(serviceCount)-\(getpid())"
// With --origin-limit N: the tasks spread over 8 origins, and the queue limits each to N
// connections across the services (limited claims take turns under the queue's lock).
let originLimit = options["origin-limit"].flatMap { Int($0) }

let services: [PostgresClaimingQueue]
do {
    services = try (0..<serviceCount).map { number in
        try PostgresClaimingQueue(queue: queueName, connectionString: connection, owner: "bench-\(number)")
    }
    if let originLimit { try services[0].setLimits(PostgresClaimingQueue.Limits(maxConnectionsPerOrigin: originLimit)) }
} catch {
    fail("\(error)")
}
let tasks = (0..<taskCount).map { number in
    StoredTask(
        urlString: originLimit == nil
            ? "mock://zero/\(queueName)/\(number)" : "mock://zero-\(number % 8)/\(queueName)/\(number)",
        fileName: "\(number).bin", kind: .other, expectedLength: 0,
        receivedLength: 0, state: .pending, addedAt: Date(timeIntervalSinceReferenceDate: 700_000_000))
}
do {
    var start = 0
    while start < tasks.count {
        let end = min(start + 5000, tasks.count)
        _ = try services[0].enqueue(Array(tasks[start..<end]))
        start = end
    }
} catch {
    fail("enqueue: \(error)")
}

let finishedCount = Atomic<Int>(0)
let claimCalls = Atomic<Int>(0)
let failures = Mutex<[String]>([])
let clock = ContinuousClock()
let started = clock.now
let done = DispatchGroup()
for service in services {
    done.enter()
    // A thread per service: the calls block their thread until the server answers.
    Thread.detachNewThread {
        defer { done.leave() }
        do {
            while true {
                let leases = try service.claim(limit: batch)
                claimCalls.add(1, ordering: .relaxed)
                if leases.isEmpty { break }
                let outcomes = leases.map { lease in
                    var task = lease.task
                    task.state = .finished
                    return task
                }
                let ended = try service.finish(outcomes)
                finishedCount.add(ended.count, ordering: .relaxed)
            }
        } catch {
            failures.withLock { $0.append("\(error)") }
        }
    }
}
done.wait()
let elapsed = clock.now - started
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
for service in services { service.close() }
if let failure = failures.withLock({ $0.first }) { fail(failure) }
let finished = finishedCount.load(ordering: .relaxed)
guard finished == taskCount else { fail("finished \(finished) of \(taskCount) tasks") }
print(
    "services \(serviceCount) tasks \(finished) seconds \(String(format: "%.3f", seconds)) tasks/s "
        + "\(Int((Double(finished) / seconds).rounded())) claims \(claimCalls.load(ordering: .relaxed))")
