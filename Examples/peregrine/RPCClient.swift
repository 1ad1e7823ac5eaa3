import ArgumentParser
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Options of the commands that talk to a running `peregrine daemon` (or any aria2 RPC server).
struct RPCClientOptions: ParsableArguments {
    @Option(name: .customLong("rpc"), help: "The service's JSON-RPC URL.")
    var url = "http://127.0.0.1:6800/jsonrpc"

    @Option(
        name: .customLong("rpc-secret"),
        help: "The service's secret (or the environment's PEREGRINE_RPC_SECRET).")
    var secret: String?

    @Flag(help: "Print JSON: one object per line.")
    var json = false

    func validate() throws {
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? "") else {
            throw ValidationError("--rpc must be an http(s) URL, like http://127.0.0.1:6800/jsonrpc")
        }
    }

    var client: RPCClient {
        RPCClient(url: URL(string: url)!, secret: secret ?? ProcessInfo.processInfo.environment["PEREGRINE_RPC_SECRET"])
    }
}

/// A small JSON-RPC client of aria2's interface: one POST per call.
struct RPCClient: Sendable {
    let url: URL
    let secret: String?

    /// A JSON-RPC error the service answered.
    struct CallError: Error, CustomStringConvertible {
        var code: Int
        var message: String
        var description: String { message }
    }

    /// Calls `method` with `params` (the token goes first) and returns the result.
    func call(_ method: String, _ params: [Any] = []) async throws -> Any {
        let all: [Any] = (secret.map { ["token:\($0)"] } ?? []) + params
        let body: [String: Any] = ["jsonrpc": "2.0", "id": 1, "method": method, "params": all]
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let data: Data
        do {
            (data, _) = try await URLSession.shared.data(for: request)
        } catch {
            throw ExitError(status: 2, message: "cannot reach the service at \(url): \(error.localizedDescription)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ExitError(status: 2, message: "\(url) did not answer JSON-RPC")
        }
        if let error = object["error"] as? [String: Any] {
            throw CallError(code: error["code"] as? Int ?? 0, message: error["message"] as? String ?? "error")
        }
        return object["result"] ?? NSNull()
    }
}

/// A failure that ends the command with a status, its message on standard error.
struct ExitError: Error, CustomStringConvertible {
    var status: Int32
    var message: String
    var description: String { message }
}
