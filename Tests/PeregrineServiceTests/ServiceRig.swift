import Foundation
import Peregrine
import PeregrineCurlTransport
import PeregrineService
import TestSupport
import Testing

/// A running ``RPCService`` on an ephemeral port, on a real `DownloadManager` (libcurl, JSON
/// store) and a real nginx serving test files; stopped with ``stop()``.
final class ServiceRig: Sendable {
    let server: NginxServer
    let scratch: TemporaryDirectory
    let manager: DownloadManager
    let service: RPCService
    let port: Int
    let secret: String?
    private let running: Task<Void, any Error>
    private let ownsServer: Bool

    var downloads: String { scratch.path("downloads") }
    var state: String { scratch.path("state") }

    /// Starts a rig, runs `body` with it and stops it, also when `body` throws.
    static func with(
        secret: String? = "s3cret", allowOriginAll: Bool = false, limits: RPCLimits = RPCLimits(),
        _ body: (ServiceRig) async throws -> Void
    ) async throws {
        let rig = try await start(secret: secret, allowOriginAll: allowOriginAll, limits: limits)
        do {
            try await body(rig)
        } catch {
            await rig.stop()
            throw error
        }
        await rig.stop()
    }

    /// A scratch directory and an nginx (access log in the combined format, throttled `/slow/`,
    /// a 503 at `/unavailable.bin`) serving its files.
    static func makeServer() async throws -> (NginxServer, TemporaryDirectory) {
        let scratch = try TemporaryDirectory(prefix: "peregrine-service")
        let server = try NginxServer(
            .init(extraDirectives: [
                "access_log \(scratch.path("access.log"));", "sendfile_max_chunk 32k;",
                "location /slow/ { limit_rate 200k; }", "location = /unavailable.bin { return 503; }",
            ]))
        try await server.start()
        return (server, scratch)
    }

    /// Starts the service, on its own nginx and directory or on `shared` ones (which
    /// ``stop()`` then leaves alone).
    static func start(
        secret: String? = "s3cret", allowOriginAll: Bool = false, limits: RPCLimits = RPCLimits(),
        shared: (NginxServer, TemporaryDirectory)? = nil
    ) async throws -> ServiceRig {
        let server: NginxServer
        let scratch: TemporaryDirectory
        if let shared {
            (server, scratch) = shared
        } else {
            (server, scratch) = try await makeServer()
        }
        let requests = TaskRequestTable()
        var managerConfiguration = DownloadManager.Configuration(
            downloadDirectory: scratch.path("downloads"), stateDirectory: scratch.path("state"),
            transport: CurlTransport(), flushDelay: .milliseconds(50))
        managerConfiguration.maxDownloadCount = 5
        managerConfiguration.downloadNewFileImmediately = false
        managerConfiguration.requestAdapter = requests
        managerConfiguration.retryPolicy = requests.retryPolicy(over: managerConfiguration.retryPolicy)
        managerConfiguration.thumbnails = Thumbnailer.Configuration(cachePolicy: .memoryOnly)
        let manager = try DownloadManager(identifier: "service", configuration: managerConfiguration)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let service = RPCService(
            manager: manager,
            configuration: RPCServiceConfiguration(
                port: 0, secret: secret.map(SecretToken.init), allowOriginAll: allowOriginAll, limits: limits,
                requestTable: requests, onListening: { continuation.yield($0) }),
            logger: Logger(label: "test.service"))
        let running = Task { try await service.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next(), "the service did not start")
        return ServiceRig(
            server: server, scratch: scratch, manager: manager, service: service, port: port, secret: secret,
            running: running, ownsServer: shared == nil)
    }

    private init(
        server: NginxServer, scratch: TemporaryDirectory, manager: DownloadManager, service: RPCService, port: Int,
        secret: String?, running: Task<Void, any Error>, ownsServer: Bool
    ) {
        self.ownsServer = ownsServer
        self.server = server
        self.scratch = scratch
        self.manager = manager
        self.service = service
        self.port = port
        self.secret = secret
        self.running = running
    }

    /// Shuts the service down (as `aria2.shutdown` does) and waits for it.
    func shutDown() async throws {
        service.requestShutdown()
        try await running.value
    }

    /// Waits until the service stopped on its own (after `aria2.shutdown`).
    func waitUntilStopped() async throws { try await running.value }

    /// Whether the service stops on its own within `limit` (a bound against a hang, not a
    /// measure: a test gives it far more than it needs).
    func hasStopped(within limit: Duration) async -> Bool {
        let running = self.running
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                _ = try? await running.value
                return true
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Shuts the service down, then nginx, and removes the files (unless shared).
    func stop() async {
        try? await shutDown()
        if ownsServer {
            server.stop()
            scratch.remove()
        }
    }

    /// Serves `count` seeded bytes at `path`; returns their SHA-256 (from `sha256sum`).
    @discardableResult
    func serve(_ path: String, count: Int, seed: UInt64) throws -> String {
        var random = SeededRandom(seed: seed)
        let bytes = Data(random.bytes(count))
        let file = server.documentPath(path)
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: file))
        return try fileSHA256(file)
    }

    /// Calls a method over HTTP and returns the parsed response object; `params` is the JSON
    /// text of the parameters after the token.
    func call(_ method: String, _ params: String = "", id: Int = 1) async throws -> [String: Any] {
        let items = (secret.map { ["\"token:\($0)\""] } ?? []) + (params.isEmpty ? [] : [params])
        let body =
            "{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"\(method)\",\"params\":[\(items.joined(separator: ","))]}"
        let text = try await post(body).body
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// The result of a method, or a failed expectation with the error.
    func result(_ method: String, _ params: String = "") async throws -> Any {
        let response = try await call(method, params)
        return try #require(response["result"], "\(method) failed: \(response)")
    }

    /// The error object of a call that must fail.
    func error(_ method: String, _ params: String = "") async throws -> (code: Int, message: String) {
        let response = try await call(method, params)
        let error = try #require(response["error"] as? [String: Any], "\(method) did not fail: \(response)")
        return (error["code"] as? Int ?? 0, error["message"] as? String ?? "")
    }

    /// POSTs a raw body on a new connection.
    func post(_ body: String, headers: [String: String] = [:]) async throws -> RPCTestClient.Response {
        let port = self.port
        return try await onOwnThread { try RPCTestClient(port: port).post(body, headers: headers) }
    }

    /// Waits for an event of the manager about `url` that `matches`, with a 60 s bound.
    static func await(
        _ events: AsyncStream<DownloadManagerEvent>, _ matches: @escaping @Sendable (EngineEvent) -> Bool
    ) async -> EngineEvent? {
        await withTaskGroup(of: EngineEvent?.self) { group in
            group.addTask {
                for await event in events {
                    if case .task(let taskEvent) = event, matches(taskEvent) { return taskEvent }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// SHA-256 through the system's `sha256sum`, independent of the code under test.
func fileSHA256(_ path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [path]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(String(decoding: output, as: UTF8.self).prefix(64))
}
