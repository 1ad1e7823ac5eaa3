// ahc-download URL OUTPUT
// ahc-download --parallel N DIRECTORY URL...
//
// Downloads with async-http-client's `FileDownloadDelegate`, the way a Swift-on-Linux user
// would without Peregrine. The second form downloads many URLs, at most N at once, each to
// DIRECTORY/<last path component> (P2). Exits non-zero on any error or a non-2xx status (and
// then removes whatever the delegate wrote, since FileDownloadDelegate writes any body).
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

@main
struct AHCDownload {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var parallel = 0
        if arguments.first == "--parallel", arguments.count >= 4, let n = Int(arguments[1]), n > 0 {
            parallel = n
            arguments.removeFirst(2)
        }
        guard parallel > 0 || arguments.count == 2 else {
            FileHandle.standardError.write(
                Data("usage: ahc-download URL OUTPUT | ahc-download --parallel N DIRECTORY URL...\n".utf8))
            exit(64)
        }
        let jobs: [(url: String, output: String)]
        if parallel > 0 {
            let directory = arguments[0]
            jobs = arguments.dropFirst().map { url in
                (url, directory + "/" + (url.split(separator: "/").last.map(String.init) ?? "index.html"))
            }
        } else {
            jobs = [(arguments[0], arguments[1])]
            parallel = 1
        }

        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        var failures: [String] = []
        await withTaskGroup(of: String?.self) { group in
            var next = 0
            func addNext() {
                guard next < jobs.count else { return }
                let job = jobs[next]
                next += 1
                group.addTask { await download(job.url, to: job.output, with: client) }
            }
            for _ in 0..<min(parallel, jobs.count) { addNext() }
            for await failure in group {
                if let failure { failures.append(failure) }
                addNext()
            }
        }
        do {
            try await client.shutdown()
        } catch {
            failures.append("shutdown failed: \(error)")
        }
        if !failures.isEmpty {
            for failure in failures.prefix(5) {
                FileHandle.standardError.write(Data("ahc-download: \(failure)\n".utf8))
            }
            exit(1)
        }
    }

    /// Downloads one URL; returns why it failed, or nil.
    static func download(_ url: String, to output: String, with client: HTTPClient) async -> String? {
        var failure: String?
        do {
            let request = try HTTPClient.Request(url: url, method: .GET)
            let delegate = try FileDownloadDelegate(path: output)
            let progress = try await client.execute(request: request, delegate: delegate).futureResult.get()
            let status = progress.head.status
            if !(200..<300).contains(status.code) {
                failure = "HTTP \(status.code) \(status.reasonPhrase) for \(url)"
            } else if let total = progress.totalBytes, total != progress.receivedBytes {
                failure = "received \(progress.receivedBytes) bytes, expected \(total) for \(url)"
            }
        } catch {
            failure = "\(url): \(error)"
        }
        if failure != nil { try? FileManager.default.removeItem(atPath: output) }
        return failure
    }
}
