// p2-download --parallel N --state DIRECTORY OUTPUT URL...
//
// P2's Peregrine contender (Benchmarks/p2.sh): downloads every URL into OUTPUT through the
// `DownloadManager` facade as an application would use it — libcurl transport, the default JSON
// store under the state directory (every state change journaled, durable ones synced), and an
// event consumer reading the manager's event stream — at most N at once. Exits 0 when every
// task finished, 1 with the failures otherwise.
import Foundation
import Peregrine
import Synchronization

@main
struct P2Download {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var parallel = 16
        var state = ""
        while let first = arguments.first, first.hasPrefix("--"), arguments.count >= 2 {
            switch first {
            case "--parallel": parallel = Int(arguments[1]) ?? 0
            case "--state": state = arguments[1]
            default: fail("unknown option \(first)")
            }
            arguments.removeFirst(2)
        }
        guard parallel > 0, !state.isEmpty, arguments.count >= 2 else {
            fail("usage: p2-download --parallel N --state DIRECTORY OUTPUT URL...")
        }
        let output = arguments.removeFirst()
        let urls = arguments

        let manager: DownloadManager
        do {
            var configuration = DownloadManager.Configuration(downloadDirectory: output, stateDirectory: state)
            configuration.maxDownloadCount = parallel
            configuration.conflictPolicy = .replace
            manager = try DownloadManager(identifier: "p2", configuration: configuration)
        } catch {
            fail("\(error)")
        }
        let events = Task {
            var count = 0
            for await _ in manager.events() { count += 1 }
            return count
        }
        let outcome = Mutex((done: 0, failures: [String]()))
        let finished = AsyncStream<Void>.makeStream()
        manager.taskSuccessOrFailHandler = { urlString, result in
            let all = outcome.withLock { outcome in
                if case .failure(let reason) = result { outcome.failures.append("\(urlString): \(reason)") }
                outcome.done += 1
                return outcome.done == urls.count
            }
            if all { finished.continuation.finish() }
        }
        do {
            let added = try manager.download(urls)
            if added.count != urls.count { fail("only \(added.count) of \(urls.count) URLs were added") }
        } catch {
            fail("\(error)")
        }
        for await _ in finished.stream {}
        do { try manager.saveData() } catch { fail("saving: \(error)") }
        manager.shutDown()
        events.cancel()
        let failures = outcome.withLock { $0.failures }
        if !failures.isEmpty {
            for failure in failures.prefix(5) { FileHandle.standardError.write(Data("p2-download: \(failure)\n".utf8)) }
            exit(1)
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("p2-download: \(message)\n".utf8))
        exit(1)
    }
}
