// P4: the stores at 100 000 / 1 000 000 tasks.
//
// Usage (one measurement per process, so that memory figures are this measurement's own):
//   StorageBenchmark prepare --backend json|plist|sqlite|naive-json|naive-plist --count N --root DIR
//   StorageBenchmark load    --backend … --count N --root DIR
//       prints: seconds tasks peak-RSS-MiB RSS-MiB (the peak, and what is resident with the tasks loaded)
//   StorageBenchmark change  --backend json|plist|sqlite --root DIR --changes M
//       prints: mean-progress-µs mean-durable-µs p99-durable-µs mean-all-µs compaction-s
//   StorageBenchmark change  --backend naive-json|naive-plist --root DIR --changes M
//       prints: mean-save-s (one change, then the whole list rewritten atomically)
import PeregrineJSONStorage
import PeregrinePlistStorage
import PeregrineStorage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func fail(_ message: String) -> Never {
    let line = Array("StorageBenchmark: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

var options: [String: String] = [:]
let arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else { fail("usage: StorageBenchmark prepare|load|change --backend B …") }
var index = 1
while index + 1 < arguments.count {
    options[String(arguments[index].dropFirst(2))] = arguments[index + 1]
    index += 2
}
let backend = options["backend"] ?? "json"
let count = Int(options["count"] ?? "100000") ?? 100_000
guard let root = options["root"] else { fail("--root is required") }
let changeCount = Int(options["changes"] ?? "20000") ?? 20_000

/// A realistic task: most finished, some stopped with a resume record, a tenth with meta info.
func makeTask(_ number: Int, rng: inout SplitMix64) -> StoredTask {
    let names = ["holiday", "Report", "song", "Movie", "backup", "invoice", "archive", "Lecture", "podcast", "ubuntu"]
    let extensions: [(String, FileKind, String)] = [
        ("jpg", .image, "image/jpeg"), ("mp3", .audio, "audio/mpeg"), ("mp4", .video, "video/mp4"),
        ("pdf", .document, "application/pdf"), ("zip", .other, "application/zip"),
    ]
    let (ext, kind, mime) = extensions[Int(rng.next() % 5)]
    let name = "\(names[Int(rng.next() % 10)])_\(number).\(ext)"
    let length = Int64(rng.next() % 4_000_000_000)
    let finished = rng.next() % 4 != 0
    var task = StoredTask(
        urlString: "https://downloads.example.com/files/\(number / 1000)/\(name)", fileName: name, kind: kind,
        mimeType: mime, expectedLength: length, receivedLength: finished ? length : length / 3,
        state: finished ? .finished : .stopped,
        addedAt: Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(number) * 1.5),
        finishedAt: finished ? Date(timeIntervalSinceReferenceDate: 700_000_100 + Double(number) * 1.5) : nil)
    if !finished {
        task.resumeRecord = ResumeRecord(
            offset: length / 3, validator: .entityTag("\"\(String(rng.next(), radix: 16))\""), expectedLength: length)
    }
    if number % 10 == 0 {
        task.metaInfo = ["source": .string("rss"), "rating": .integer(Int64(rng.next() % 5)), "seen": .boolean(true)]
        task.checksum = "sha256=" + String(repeating: "ab", count: 32)
    }
    return task
}

/// The peak resident memory so far (`VmHWM`), or with `field: "VmRSS:"` what is resident now.
func peakResidentMiB(field: String = "VmHWM:") -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field) {
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
        return kilobytes / 1024
    }
    return 0
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func openStore(_ name: String) throws -> any TaskStore {
    let configuration = StoreConfiguration(rootDirectory: root)
    switch name {
    case "json": return try JSONTaskStore(identifier: "bench", configuration: configuration)
    case "plist": return try PlistTaskStore(identifier: "bench", configuration: configuration)
    default: fail("unknown backend \(name)")
    }
}

// MARK: The naive peer: the whole list as one Codable document, rewritten atomically on each save.

struct NaiveTask: Codable {
    var url: String
    var list: String
    var fileName: String?
    var kind: String?
    var mimeType: String?
    var expectedLength: Int64?
    var receivedLength: Int64
    var state: String
    var resumeOffset: Int64?
    var entityTag: String?
    var addedAt: Date
    var finishedAt: Date?
    var checksum: String?
    var meta: [String: String]?

    init(_ task: StoredTask) {
        url = task.urlString
        list = task.list
        fileName = task.fileName
        kind = task.kind?.rawValue
        mimeType = task.mimeType
        expectedLength = task.expectedLength
        receivedLength = task.receivedLength
        state = "\(task.state)"
        resumeOffset = task.resumeRecord?.offset
        if case .entityTag(let tag) = task.resumeRecord?.validator { entityTag = tag }
        addedAt = task.addedAt
        finishedAt = task.finishedAt
        checksum = task.checksum
        meta = task.metaInfo.isEmpty ? nil : task.metaInfo.mapValues { "\($0)" }
    }
}

func naivePath(_ name: String) -> String { "\(root)/bench.\(name)" }

func naiveSave(_ tasks: [NaiveTask], _ name: String) throws {
    let data: Data
    if name == "naive-json" {
        data = try JSONEncoder().encode(tasks)
    } else {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        data = try encoder.encode(tasks)
    }
    let temporary = naivePath(name) + ".tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard descriptor >= 0 else { fail("cannot create \(temporary)") }
    data.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            guard written > 0 else { fail("write failed") }
            offset += written
        }
    }
    fsync(descriptor)
    close(descriptor)
    guard rename(temporary, naivePath(name)) == 0 else { fail("rename failed") }
    let directory = open(root, O_RDONLY | O_DIRECTORY)
    fsync(directory)
    close(directory)
}

func naiveLoad(_ name: String) throws -> [NaiveTask] {
    let data = try Data(contentsOf: URL(fileURLWithPath: naivePath(name)))
    if name == "naive-json" { return try JSONDecoder().decode([NaiveTask].self, from: data) }
    return try PropertyListDecoder().decode([NaiveTask].self, from: data)
}

let clock = ContinuousClock()
do {
    switch (mode, backend.hasPrefix("naive")) {
    case ("prepare", _) where backend == "sqlite":
        var rng = SplitMix64(state: 42)
        try SQLitePeer.prepare((0..<count).map { makeTask($0, rng: &rng) }, root: root)
    case ("load", _) where backend == "sqlite":
        let start = clock.now
        let tasks = try SQLitePeer.load(root: root)
        let elapsed = seconds(clock.now - start)
        guard tasks.count == count else { fail("loaded \(tasks.count) of \(count)") }
        withExtendedLifetime(tasks) { print(elapsed, tasks.count, peakResidentMiB(), peakResidentMiB(field: "VmRSS:")) }
    case ("change", _) where backend == "sqlite":
        let figures = try SQLitePeer.change(root: root, changes: changeCount, count: count)
        var durable = figures.durable
        durable.sort()
        let p99 = durable.isEmpty ? .zero : durable[min(durable.count - 1, durable.count * 99 / 100)]
        let durableMean = durable.reduce(Duration.zero, +) / max(1, durable.count)
        print(
            seconds(figures.progress) / Double(max(1, figures.progressCount)) * 1e6, seconds(durableMean) * 1e6,
            seconds(p99) * 1e6, seconds(figures.overall) / Double(changeCount) * 1e6, seconds(figures.checkpoint))
    case ("prepare", false):
        let store = try openStore(backend)
        var rng = SplitMix64(state: 42)
        var batch: [StoreChange] = []
        for number in 0..<count {
            batch.append(.putTask(makeTask(number, rng: &rng)))
            if batch.count == 10_000 {
                try store.record(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        try store.record(batch)
        try store.record([
            .putList(
                StoredList(sections: [(0..<min(count, 1000)).map { "https://downloads.example.com/files/0/\($0)" }])),
            .setConfiguration(["maxDownloadCount": .integer(3)]),
        ])
        try store.compact()
        try store.close()
    case ("prepare", true):
        var rng = SplitMix64(state: 42)
        try naiveSave((0..<count).map { NaiveTask(makeTask($0, rng: &rng)) }, backend)
    case ("load", false):
        let start = clock.now
        let store = try openStore(backend)
        let snapshot = try store.load()
        let elapsed = seconds(clock.now - start)
        guard snapshot.tasks.count == count, snapshot.repairs.isEmpty else {
            fail("loaded \(snapshot.tasks.count) of \(count) tasks, repairs \(snapshot.repairs)")
        }
        withExtendedLifetime(snapshot) {
            print(elapsed, snapshot.tasks.count, peakResidentMiB(), peakResidentMiB(field: "VmRSS:"))
        }
        try store.close()
    case ("load", true):
        let start = clock.now
        let tasks = try naiveLoad(backend)
        let elapsed = seconds(clock.now - start)
        guard tasks.count == count else { fail("loaded \(tasks.count) of \(count)") }
        withExtendedLifetime(tasks) { print(elapsed, tasks.count, peakResidentMiB(), peakResidentMiB(field: "VmRSS:")) }
    case ("change", false):
        let store = try openStore(backend)
        let snapshot = try store.load()
        var tasks = snapshot.tasks
        var rng = SplitMix64(state: 7)
        var progressTotal: Duration = .zero
        var progressCount = 0
        var durable: [Duration] = []
        let overall = clock.now
        for number in 0..<changeCount {
            let position = Int(rng.next() % UInt64(tasks.count))
            var task = tasks[position]
            // Nine progress updates for each state change, as a transfer reports them.
            if number % 10 != 9 {
                task.state = .downloading
                task.receivedLength += 65_536
                let start = clock.now
                try store.record([.putTask(task)])
                progressTotal += clock.now - start
                progressCount += 1
            } else {
                task.state = .finished
                task.finishedAt = Date()
                let start = clock.now
                try store.record([.putTask(task)])
                durable.append(clock.now - start)
            }
            tasks[position] = task
        }
        try store.save()
        let all = seconds(clock.now - overall) / Double(changeCount)
        durable.sort()
        let p99 = durable.isEmpty ? .zero : durable[min(durable.count - 1, durable.count * 99 / 100)]
        let durableMean = durable.reduce(Duration.zero, +) / max(1, durable.count)
        let compactionStart = clock.now
        try store.compact()
        let compaction = seconds(clock.now - compactionStart)
        print(
            seconds(progressTotal) / Double(max(1, progressCount)) * 1e6, seconds(durableMean) * 1e6,
            seconds(p99) * 1e6, all * 1e6, compaction)
        try store.close()
    case ("change", true):
        var tasks = try naiveLoad(backend)
        var rounds: [Double] = []
        for round in 0..<max(1, changeCount) {
            tasks[round % tasks.count].receivedLength += 1
            let start = clock.now
            try naiveSave(tasks, backend)
            rounds.append(seconds(clock.now - start))
        }
        print(rounds.reduce(0, +) / Double(rounds.count))
    default:
        fail("unknown mode \(mode)")
    }
} catch {
    fail("\(error)")
}
