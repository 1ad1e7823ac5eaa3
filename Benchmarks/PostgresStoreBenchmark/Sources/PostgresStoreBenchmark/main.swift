// Issue 20: the PostgreSQL store beside the journal store (JSONTaskStore), same tasks, same
// process, one after the other.
//
// Usage:
//   PostgresStoreBenchmark --postgres postgresql://… --root DIR [--tasks 10000] [--progress 20000]
//       [--list 10000] [--list-changes 200]
// Prints one line per backend and measure: backend measure value unit [detail]
//   put          tasks added one per record() call (durable): tasks/s
//   put-batch    the same tasks in one record() call: tasks/s
//   progress     progress updates (not durable), one per call: updates/s
//   durable      state changes (durable), one per call: changes/s, with the p99 in µs
//   load         load() of every task: tasks/s, with the seconds
//   list-one     a list of --list URLs, one item replaced per putList: µs per change (mean), rows
//   list-full    the same list written whole the first time: seconds
import PeregrineJSONStorage
import PeregrinePostgresStorage
import PeregrineStorage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String) -> Never {
    let line = Array("PostgresStoreBenchmark: \(message)\n".utf8)
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
guard let root = options["root"] else { fail("--root is required") }
let taskCount = Int(options["tasks"] ?? "10000") ?? 10_000
let progressCount = Int(options["progress"] ?? "20000") ?? 20_000
let listLength = Int(options["list"] ?? "10000") ?? 10_000
let listChanges = Int(options["list-changes"] ?? "200") ?? 200

func task(_ number: Int, state: DownloadState = .pending, received: Int64 = 0) -> StoredTask {
    StoredTask(
        urlString: "https://downloads.example.com/files/\(number / 1000)/file_\(number).zip",
        fileName: "file_\(number).zip", kind: .other, mimeType: "application/zip", expectedLength: 4_000_000,
        receivedLength: received, state: state,
        addedAt: Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(number) * 1.5))
}

let clock = ContinuousClock()
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = clock.now
    try body()
    return seconds(clock.now - start)
}
func report(_ backend: String, _ measure: String, _ value: Double, _ unit: String, _ detail: String = "") {
    print("\(backend) \(measure) \(String(format: "%.1f", value)) \(unit) \(detail)")
}

func run(_ backend: String, open: (String) throws -> any TaskStore, rows: (any TaskStore) -> Int?) throws {
    // Adds, one durable record() per task.
    var store = try open("bench")
    let added = try measure {
        for number in 0..<taskCount { try store.record([.putTask(task(number))]) }
    }
    report(backend, "put", Double(taskCount) / added, "tasks/s", String(format: "%.2f s", added))

    // Progress: not durable, one call each, on random tasks.
    var generator = SystemRandomNumberGenerator()
    let progress = try measure {
        for step in 0..<progressCount {
            let number = Int.random(in: 0..<taskCount, using: &generator)
            try store.record([.putTask(task(number, state: .downloading, received: Int64(step)))])
        }
        try store.save()
    }
    report(backend, "progress", Double(progressCount) / progress, "updates/s")

    // Durable state changes, one call each, with their p99.
    var latencies: [Double] = []
    for step in 0..<(progressCount / 10) {
        let number = Int.random(in: 0..<taskCount, using: &generator)
        let state: DownloadState = step % 2 == 0 ? .paused : .stopped
        latencies.append(try measure { try store.record([.putTask(task(number, state: state))]) })
    }
    latencies.sort()
    let durableMean = latencies.reduce(0, +) / Double(latencies.count)
    report(
        backend, "durable", 1 / durableMean, "changes/s",
        String(format: "p99 %.0f µs", latencies[latencies.count * 99 / 100] * 1e6))

    // Load every task, in a fresh store object.
    try store.close()
    store = try open("bench")
    var loaded = 0
    let loading = try measure { loaded = try store.load().tasks.count }
    guard loaded == taskCount else { fail("\(backend) loaded \(loaded) of \(taskCount) tasks") }
    report(backend, "load", Double(loaded) / loading, "tasks/s", String(format: "%.3f s", loading))

    // A list of listLength URLs, written whole, then one item replaced per putList.
    var list = StoredList(identifier: "big", sections: [(0..<listLength).map { "https://example.com/\($0).bin" }])
    let full = try measure { try store.record([.putList(list)]) }
    report(backend, "list-full", full * 1000, "ms", "\(listLength) URLs")
    let rowsBefore = rows(store)
    let changing = try measure {
        for change in 0..<listChanges {
            list.sections[0][Int.random(in: 0..<listLength, using: &generator)] =
                "https://example.com/new-\(change).bin"
            try store.record([.putList(list)])
        }
    }
    let rowsDetail = rowsBefore.flatMap { before in rows(store).map { "\(($0 - before) / listChanges) rows per change" }
    }
    report(backend, "list-one", changing / Double(listChanges) * 1e6, "µs", rowsDetail ?? "")
    try store.close()
    // The store must read the list back as written.
    let check = try open("bench")
    guard try check.load().lists["big"] == list else { fail("\(backend) read back another list") }
    try check.close()

    // The same tasks in one call (a fresh identifier).
    let batch = try open("bench-batch")
    let batched = try measure { try batch.record((0..<taskCount).map { .putTask(task($0)) }) }
    report(backend, "put-batch", Double(taskCount) / batched, "tasks/s", String(format: "%.3f s", batched))
    try batch.close()
}

do {
    let configuration = StoreConfiguration(rootDirectory: root)
    try run(
        "journal-json", open: { try JSONTaskStore(identifier: $0, configuration: configuration) }, rows: { _ in nil })
    try run(
        "postgres", open: { try PostgresTaskStore(identifier: $0, connectionString: connection) },
        rows: { ($0 as? PostgresTaskStore)?.statistics.listRowsWritten })
} catch {
    fail("\(error)")
}
