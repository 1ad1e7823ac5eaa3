import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A JSON-RPC server running as a child process — `peregrine daemon` or `aria2c --enable-rpc`
/// — on a port picked for it, with its standard error in a file.
final class DaemonProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    let log: String

    /// Starts `executable` with `arguments` (where `{port}` is replaced by a free port) and
    /// waits until the port accepts connections (at most 60 s).
    init(_ executable: String, _ arguments: [String], log: String, environment: [String: String] = [:]) async throws {
        let picked = try FreePort.pick()
        port = picked
        self.log = log
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments.map { $0.replacingOccurrences(of: "{port}", with: String(picked)) }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        let port = self.port
        let process = self.process
        let ready = try await onOwnThread { () -> Bool in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, process.isRunning {
                if FreePort.isAccepting(port) { return true }
                usleep(10_000)
            }
            return false
        }
        guard ready else {
            stop()
            throw RPCTestClient.ClientError("\(executable) did not listen: \(logText)")
        }
    }

    var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Sends a signal and waits for the process to end; returns its termination status.
    @discardableResult
    func signal(_ signal: Int32) async -> Int32 {
        kill(process.processIdentifier, signal)
        let process = self.process
        return
            (try? await onOwnThread { () -> Int32 in
                process.waitUntilExit()
                return process.terminationStatus
            }) ?? -1
    }

    /// Kills the process if it still runs.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    /// Calls a JSON-RPC method and returns the response object.
    func call(_ method: String, _ params: String) async throws -> [String: Any] {
        let body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\(method)\",\"params\":[\(params)]}"
        let port = self.port
        let text = try await onOwnThread { try RPCTestClient(port: port).post(body).body }
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw RPCTestClient.ClientError("not a JSON-RPC response: \(text)")
        }
        return object
    }
}
