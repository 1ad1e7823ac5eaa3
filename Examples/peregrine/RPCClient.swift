import ArgumentParser
import CCurl
import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
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

/// A small JSON-RPC client of aria2's interface: one POST per call, through libcurl (http or
/// https, as the `--rpc` URL says).
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
        let body = JSONText.serialize(["jsonrpc": "2.0", "id": 1, "method": method, "params": all] as [String: Any])
        let target = url.absoluteString
        let answer: Result<[UInt8], ExitError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: Self.post(body, to: target)) }
        }
        let data = try answer.get()
        guard let object = (try? JSONText.parse(String(decoding: data, as: UTF8.self))) as? [String: Any] else {
            throw ExitError(status: 2, message: "\(target) did not answer JSON-RPC")
        }
        if let error = object["error"] as? [String: Any] {
            throw CallError(code: error["code"] as? Int ?? 0, message: error["message"] as? String ?? "error")
        }
        return object["result"] ?? JSONText.null
    }

    /// One blocking POST of `body` as JSON; the answer's body whatever its status (a JSON-RPC
    /// error comes with 400 or 500), or why the service could not be reached.
    private static func post(_ body: String, to target: String) -> Result<[UInt8], ExitError> {
        _ = curlReady
        guard let handle = curl_easy_init() else {
            return .failure(ExitError(status: 2, message: "libcurl could not make a request"))
        }
        defer { curl_easy_cleanup(handle) }
        let headers = curl_slist_append(nil, "Content-Type: application/json")
        defer { curl_slist_free_all(headers) }
        let received = ReceivedBytes()
        let box = Unmanaged.passUnretained(received).toOpaque()
        _ = peregrine_easy_setopt_string(handle, CURLOPT_URL, target)
        _ = peregrine_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = peregrine_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, 10)
        _ = peregrine_easy_setopt_long(handle, CURLOPT_TIMEOUT, 120)
        _ = peregrine_easy_setopt_pointer(handle, CURLOPT_HTTPHEADER, headers)
        _ = peregrine_easy_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.utf8.count)
        _ = peregrine_easy_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, body)
        _ = peregrine_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, user in
            guard let data, let user else { return 0 }
            let bytes = Unmanaged<ReceivedBytes>.fromOpaque(user).takeUnretainedValue()
            let length = size * count
            guard bytes.value.count + length <= 64 << 20 else { return 0 }
            data.withMemoryRebound(to: UInt8.self, capacity: length) {
                bytes.value.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
            }
            return length
        }
        _ = peregrine_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, box)
        let code = curl_easy_perform(handle)
        guard code == CURLE_OK else {
            let reason = String(cString: curl_easy_strerror(code))
            return .failure(ExitError(status: 2, message: "cannot reach the service at \(target): \(reason)"))
        }
        return .success(received.value)
    }

    /// The body as it arrives; used by one transfer on one thread.
    private final class ReceivedBytes: @unchecked Sendable {
        var value: [UInt8] = []
    }

    /// libcurl's global state, made once (OpenSSL without its exit handler, as CurlTransport
    /// does).
    private static let curlReady: Bool = {
        _ = peregrine_openssl_init_no_atexit()
        return curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()
}

/// A failure that ends the command with a status, its message on standard error.
struct ExitError: Error, CustomStringConvertible {
    var status: Int32
    var message: String
    var description: String { message }
}
