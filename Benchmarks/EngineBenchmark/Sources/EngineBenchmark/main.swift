// P7: N zero-byte tasks through DownloadEngine on MockTransport in automatic mode, from the
// `download` call to the last completion handler: tasks per second, median of several rounds.
//
// Usage: EngineBenchmark [--tasks 10000] [--rounds 5] [--limits 16,1] [--directory DIR]...
// Prints one Markdown table row per download directory and limit (maxDownloadCount; 0 =
// unlimited). Each directory is emptied first and removed at the end.

import Dispatch
import Foundation
import PeregrineEngine
import PeregrineMockTransport
import Synchronization

struct Options {
    var tasks = 10_000
    var rounds = 5
    var limits = [16, 1]
    var directories: [String] = []

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            func value() -> String {
                guard let value = iterator.next() else { fail("\(argument) needs a value") }
                return value
            }
            switch argument {
            case "--tasks": tasks = Int(value()) ?? 0
            case "--rounds": rounds = Int(value()) ?? 0
            case "--limits": limits = value().split(separator: ",").compactMap { Int($0) }
            case "--directory": directories.append(value())
            default: fail("unknown argument \(argument)")
            }
        }
        guard tasks > 0, rounds > 0, !limits.isEmpty else { fail("--tasks, --rounds and --limits must be positive") }
        if directories.isEmpty { directories = [FileManager.default.temporaryDirectory.path + "/peregrine-p7"] }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("EngineBenchmark: \(message)\n".utf8))
    exit(2)
}

nonisolated(unsafe) var runCount = 0

/// The CPU time of the whole process so far, in seconds (every thread).
func processCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
}

/// One run: the wall time and the process's CPU time from adding the tasks to the last
/// completion. The machine is shared, so CPU time tells the engine's cost apart from waiting.
///
/// Each run downloads into a fresh subdirectory; they are all removed at the end of the program,
/// not between runs: deleting 10 000 files right before creating 10 000 more makes ext4 scan
/// past its recently freed inodes on every creation, which would measure the file system's
/// allocator under churn rather than the engine.
func run(tasks: Int, limit: Int, directory base: String) throws -> (wall: Double, cpu: Double) {
    runCount += 1
    let directory = base + "/run-\(runCount)"
    let server = MockServer()
    var urls: [String] = []
    urls.reserveCapacity(tasks)
    for index in 0..<tasks {
        server.setRoute(.file(.empty), for: "/f/\(index)")
        urls.append("http://mock.test/f/\(index)")
    }
    let transport = MockTransport(server: server, mode: .automatic)
    let engine = try DownloadEngine(
        transport: transport, configuration: .init(directory: directory, maxDownloadCount: limit))
    let done = DispatchSemaphore(value: 0)
    let finished = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    engine.taskCompletionHandler = { _, result in
        if case .failure = result { failed.add(1, ordering: .relaxed) }
        if finished.add(1, ordering: .relaxed).newValue == tasks { done.signal() }
    }
    let clock = ContinuousClock()
    let cpuStart = processCPUSeconds()
    let start = clock.now
    let added = engine.download(urls).added.count
    guard added == tasks else { fail("only \(added) of \(tasks) tasks were added") }
    done.wait()
    let elapsed = start.duration(to: clock.now)
    let cpu = processCPUSeconds() - cpuStart
    let failures = failed.load(ordering: .relaxed)
    guard failures == 0 else { fail("\(failures) tasks failed") }
    let files = try FileManager.default.contentsOfDirectory(atPath: engine.directory.path)
    guard files.count == tasks else { fail("\(files.count) files for \(tasks) tasks") }
    return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18, cpu)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
print(
    "| download directory | maxDownloadCount | tasks | rounds | median wall | tasks/s (median wall) | min–max tasks/s | median CPU | tasks per CPU-second | target ≥ 20 000/s |"
)
print("|---|---|---|---|---|---|---|---|---|---|")
for directory in options.directories {
    try? FileManager.default.removeItem(atPath: directory)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    for limit in options.limits {
        _ = try run(tasks: options.tasks, limit: limit, directory: directory)  // warm-up
        var walls: [Double] = []
        var cpus: [Double] = []
        for _ in 0..<options.rounds {
            let (wall, cpu) = try run(tasks: options.tasks, limit: limit, directory: directory)
            walls.append(wall)
            cpus.append(cpu)
        }
        let wall = median(walls)
        let cpu = median(cpus)
        let rate = Double(options.tasks) / wall
        let row: [String] = [
            "`\(directory)`", limit <= 0 ? "unlimited" : String(limit), String(options.tasks), String(options.rounds),
            String(format: "%.3f s", wall), String(format: "%.0f", rate),
            String(format: "%.0f–%.0f", Double(options.tasks) / walls.max()!, Double(options.tasks) / walls.min()!),
            String(format: "%.3f s", cpu), String(format: "%.0f", Double(options.tasks) / cpu),
            rate >= 20_000 ? "met" : "**not met**",
        ]
        print("| " + row.joined(separator: " | ") + " |")
    }
}
