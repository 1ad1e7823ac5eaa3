// ahc-download URL OUTPUT
//
// Downloads URL to OUTPUT with async-http-client's `FileDownloadDelegate`, the way a
// Swift-on-Linux user would without Peregrine. Exits non-zero on any error or a non-2xx status
// (and then removes whatever the delegate wrote, since FileDownloadDelegate writes any body).
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

@main
struct AHCDownload {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 else {
            FileHandle.standardError.write(Data("usage: ahc-download URL OUTPUT\n".utf8))
            exit(64)
        }
        let url = arguments[1]
        let output = arguments[2]

        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        var failure: String?
        do {
            let request = try HTTPClient.Request(url: url, method: .GET)
            let delegate = try FileDownloadDelegate(path: output)
            let progress = try await client.execute(request: request, delegate: delegate).futureResult.get()
            let status = progress.head.status
            if !(200..<300).contains(status.code) {
                failure = "HTTP \(status.code) \(status.reasonPhrase) for \(url)"
            } else if let total = progress.totalBytes, total != progress.receivedBytes {
                failure = "received \(progress.receivedBytes) bytes, expected \(total)"
            }
        } catch {
            failure = "\(error)"
        }
        do {
            try await client.shutdown()
        } catch {
            failure = failure ?? "shutdown failed: \(error)"
        }
        if let failure {
            try? FileManager.default.removeItem(atPath: output)
            FileHandle.standardError.write(Data("ahc-download: \(failure)\n".utf8))
            exit(1)
        }
    }
}
