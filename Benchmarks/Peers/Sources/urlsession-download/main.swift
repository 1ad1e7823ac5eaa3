// urlsession-download URL OUTPUT
//
// Downloads URL with Foundation's `URLSession.downloadTask` (FoundationNetworking on Linux) and
// moves the temporary file to OUTPUT. Exits non-zero on any error or a non-2xx status.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

func fail(_ message: String, code: Int32 = 1) -> Never {
    FileHandle.standardError.write(Data("urlsession-download: \(message)\n".utf8))
    exit(code)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else { fail("usage: urlsession-download URL OUTPUT", code: 64) }
guard let url = URL(string: arguments[1]), url.scheme != nil else { fail("not a URL: \(arguments[1])") }
let output = URL(fileURLWithPath: arguments[2])

let done = DispatchSemaphore(value: 0)
nonisolated(unsafe) var failure: String?

let configuration = URLSessionConfiguration.ephemeral
configuration.timeoutIntervalForRequest = 60
let session = URLSession(configuration: configuration)
let task = session.downloadTask(with: url) { location, response, error in
    defer { done.signal() }
    if let error {
        failure = "\(error.localizedDescription) (\(url))"
        return
    }
    guard let http = response as? HTTPURLResponse else {
        failure = "no HTTP response for \(url)"
        return
    }
    guard (200..<300).contains(http.statusCode) else {
        failure = "HTTP \(http.statusCode) for \(url)"
        return
    }
    guard let location else {
        failure = "no downloaded file for \(url)"
        return
    }
    // The temporary file is deleted when this handler returns: move it now.
    do {
        let fm = FileManager.default
        if fm.fileExists(atPath: output.path) { try fm.removeItem(at: output) }
        try fm.moveItem(at: location, to: output)
    } catch {
        failure = "cannot move the download to \(output.path): \(error.localizedDescription)"
    }
}
task.resume()
done.wait()
session.finishTasksAndInvalidate()
if let failure { fail(failure) }
