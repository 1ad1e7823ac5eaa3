// P5: sorting 100 000 tasks by name with index sections and by size with size sections, adding
// 10 000 tasks to a 100 000-task addTime list, and lookups by URL and by index path.
//
// Usage: SortingBenchmark [--rounds N] [--count N]
// Prints one Markdown table row per figure: | figure | median wall | min | max | median CPU | target |
// (CPU: this thread's CPU time, which other processes on a shared machine disturb less).
// Every figure is the median of N timed rounds (default 7) after one warm-up round.
import Foundation
import PeregrineCore
import PeregrineSorting

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

func parseArguments() -> (rounds: Int, taskCount: Int) {
    var rounds = 7
    var taskCount = 100_000
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = arguments.next() {
        switch argument {
        case "--rounds": rounds = max(1, Int(arguments.next() ?? "") ?? rounds)
        case "--count": taskCount = max(1000, Int(arguments.next() ?? "") ?? taskCount)
        default:
            FileHandle.standardError.write(Data("usage: SortingBenchmark [--rounds N] [--count N]\n".utf8))
            exit(2)
        }
    }
    return (rounds, taskCount)
}
let (rounds, taskCount) = parseArguments()
let addedCount = taskCount / 10

let now = Date(timeIntervalSince1970: 1_710_504_000)
let calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(secondsFromGMT: 0)!
    return calendar
}()
let clock: @Sendable () -> Date = { now }

/// Realistic, varied file names: numbered series, words in mixed case, accents, other scripts.
func makeItems(count: Int, seed: UInt64, prefix: String, times: ClosedRange<TimeInterval>) -> [ListItem] {
    var rng = SplitMix64(state: seed)
    let words = [
        "holiday", "Report", "song", "Movie", "backup", "invoice", "Zebra", "archive", "Lecture", "podcast",
        "wallpaper", "Quarterly", "notes", "Yosemite", "kernel", "Éclair", "Ørsted", "naïve", "Документ", "写真",
        "_draft", "(2019) mix", "2024 taxes", "build", "Xcode", "update", "video", "Game", "ubuntu", "iso",
    ]
    let extensions: [(String, FileKind)] = [
        ("jpg", .image), ("png", .image), ("mp3", .audio), ("flac", .audio), ("mp4", .video), ("mkv", .video),
        ("pdf", .document), ("txt", .document), ("zip", .other), ("iso", .other),
    ]
    let sizes: [ClosedRange<Int64>] = [
        -1...(-1), 0...1_000_000, 1_000_001...100_000_000, 100_000_001...1_000_000_000,
        1_000_000_001...8_000_000_000,
    ]
    return (0..<count).map { index in
        let word = words[Int.random(in: 0..<words.count, using: &rng)]
        let (ext, kind) = extensions[Int.random(in: 0..<extensions.count, using: &rng)]
        let name: String
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: name = "\(word) \(Int.random(in: 0..<5000, using: &rng)).\(ext)"
        case 1:
            name =
                "\(word.uppercased())_\(Int.random(in: 0..<100, using: &rng))_part\(Int.random(in: 1...40, using: &rng)).\(ext)"
        case 2: name = "\(word)-\(words[Int.random(in: 0..<words.count, using: &rng)]).\(ext)"
        default: name = "IMG_\(Int.random(in: 0..<99999, using: &rng)).\(ext)"
        }
        return ListItem(
            url: "https://downloads.example.com/\(prefix)/\(index)/\(name)",
            fileName: name,
            fileSize: Int64.random(in: sizes[Int.random(in: 0..<sizes.count, using: &rng)], using: &rng),
            addTime: now.addingTimeInterval(TimeInterval.random(in: times, using: &rng)),
            kind: kind,
            isFinished: Bool.random(using: &rng)
        )
    }
}

let baseItems = makeItems(count: taskCount, seed: 1, prefix: "base", times: -60 * 86_400 ... -1)
let newestItems = makeItems(count: addedCount, seed: 2, prefix: "new", times: 0...0).enumerated().map {
    var item = $1
    item.addTime = now.addingTimeInterval(TimeInterval($0) / 1000)
    return item
}
let olderItems = makeItems(count: addedCount, seed: 3, prefix: "old", times: -60 * 86_400 ... -1)

func baseList(sectioning: ListSectioning = [.addTime, .fileSize, .fileNameIndex]) -> DownloadList {
    var list = DownloadList(sortType: .addTime, sectioning: sectioning, clock: clock, calendar: calendar)
    _ = try! list.add(baseItems)
    return list
}

/// The CPU time this thread has used, in milliseconds: less sensitive than wall time to other
/// processes on a shared machine.
func threadCPUMilliseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) / 1e6
}

struct Timings {
    var wall: [Double] = []
    var cpu: [Double] = []
}

/// Runs `body` once to warm up and `rounds` times timed; `prepare` runs untimed before each.
@MainActor func measure<State>(_ prepare: () -> State, _ body: (inout State) -> Void) -> Timings {
    var timings = Timings()
    for round in 0...rounds {
        var state = prepare()
        let cpuStart = threadCPUMilliseconds()
        let start = ContinuousClock.now
        body(&state)
        let elapsed = ContinuousClock.now - start
        let cpu = threadCPUMilliseconds() - cpuStart
        if round > 0 {
            timings.wall.append(
                Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15)
            timings.cpu.append(cpu)
        }
        withExtendedLifetime(state) {}
    }
    timings.wall.sort()
    timings.cpu.sort()
    return timings
}

var checksum = 0
@MainActor func row(_ figure: String, _ timings: Timings, per: Int = 1, unit: String = "ms", target: String) {
    let scale = unit == "ns" ? 1e6 / Double(per) : 1 / Double(per)
    func format(_ value: Double) -> String { String(format: unit == "ns" ? "%.0f ns" : "%.1f ms", value * scale) }
    let wall = timings.wall
    print(
        "| \(figure) | \(format(wall[wall.count / 2])) | \(format(wall.first!)) | \(format(wall.last!)) "
            + "| \(format(timings.cpu[timings.cpu.count / 2])) | \(target) |"
    )
}

print("| figure (\(taskCount) tasks, \(rounds) rounds) | median wall | min | max | median CPU | target |")
print("|---|---|---|---|---|---|")

// The list is sorted by add time before each timed sort, so every round sorts from the same order.
var shared = baseList()
row(
    "sort by name, A–Z + # index sections",
    measure({ shared.sortListBy(type: .addTime) }) { _ in
        shared.sortListBy(type: .fileName)
        checksum &+= shared.sectionCount
    },
    target: "≤ 150 ms"
)
row(
    "sort by size, size sections",
    measure({ shared.sortListBy(type: .addTime) }) { _ in
        shared.sortListBy(type: .fileSize)
        checksum &+= shared.sectionCount
    },
    target: "≤ 150 ms"
)
row(
    "sort by name, descending, index sections",
    measure({ shared.sortListBy(type: .addTime) }) { _ in
        shared.sortListBy(type: .fileName, order: .descending)
        checksum &+= shared.sectionCount
    },
    target: "≤ 150 ms"
)

// Adding: a fresh 100 000-task addTime list (add-time sections) each round, built untimed.
row(
    "add \(addedCount) new tasks to addTime list, one call",
    measure({ baseList() }) { list in checksum &+= try! list.add(newestItems).insertedItems.count },
    target: "no full re-sort"
)
row(
    "add \(addedCount) new tasks to addTime list, \(addedCount) calls",
    measure({ baseList() }) { list in
        for item in newestItems { checksum &+= try! list.add([item]).insertedItems.count }
    },
    target: "no full re-sort"
)
row(
    "add \(addedCount) older tasks (merged) to addTime list, one call",
    measure({ baseList() }) { list in checksum &+= try! list.add(olderItems).insertedItems.count },
    target: "no full re-sort"
)
row(
    "for scale: sort \(taskCount + addedCount) tasks by add time",
    measure({ () -> DownloadList in
        var list = baseList()
        _ = try! list.add(newestItems)
        return list
    }) { list in checksum &+= list.sortAgain().isReload ? 1 : 0 },
    target: "—"
)

// Lookups in the name-sorted, index-sectioned list, in a shuffled order.
shared.sortListBy(type: .fileName)
var rng = SplitMix64(state: 9)
let urls = baseItems.map(\.url).shuffled(using: &rng)
let paths = urls.map { shared[$0]! }
let lookupList = shared
let orderedPaths = paths.sorted()
let orderedURLs = orderedPaths.map { lookupList[$0]! }

/// Sums something of every answer locally, so the loop measures lookups and not the global counter.
@MainActor func lookups<Key>(_ keys: [Key], _ body: (DownloadList, Key) -> Int) -> Timings {
    let list = lookupList
    return measure({ () }) { _ in
        var sum = 0
        for key in keys { sum &+= body(list, key) }
        checksum &+= sum
    }
}
row(
    "lookup URL → index path, random order", lookups(urls) { $0[$1]!.item }, per: urls.count, unit: "ns", target: "O(1)"
)
row(
    "lookup index path → URL, random order", lookups(paths) { $0[$1]!.utf8.count }, per: paths.count, unit: "ns",
    target: "O(1)")
row(
    "lookup URL → index path, list order", lookups(orderedURLs) { $0[$1]!.item }, per: urls.count, unit: "ns",
    target: "O(1)")
row(
    "lookup index path → URL, list order (scrolling)",
    lookups(orderedPaths) { $0[$1]!.utf8.count }, per: paths.count, unit: "ns", target: "O(1)"
)
FileHandle.standardError.write(Data("checksum \(checksum)\n".utf8))
