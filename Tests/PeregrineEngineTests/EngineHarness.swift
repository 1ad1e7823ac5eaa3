import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineMockTransport
import PeregrineTransport
import PeregrineVerification
import Synchronization
import TestSupport
import Testing

/// An engine on a manual `MockTransport` (its virtual clock is the engine's clock) in a
/// fresh download directory, with an event recorder and completion log.
final class EngineHarness: Sendable {
    static let host = "http://mock.test"
    static let date = Date(timeIntervalSince1970: 1_700_000_000)

    let server: MockServer
    let transport: MockTransport
    let scratch: TemporaryDirectory
    let engine: DownloadEngine
    let recorder: EventRecorder
    let completions = Shared<[(String, Result<URL, FailureReason>)]>([])

    init(
        chunkSize: Int = 64 << 10, coordinator: Coordinator = Coordinator(),
        _ configure: (inout DownloadEngine.Configuration) -> Void = { _ in }
    ) throws {
        server = MockServer()
        let transport = MockTransport(server: server, mode: .manual, chunkSize: chunkSize)
        self.transport = transport
        scratch = try TemporaryDirectory(prefix: "peregrine-engine")
        var configuration = DownloadEngine.Configuration(
            directory: scratch.path("downloads"),
            clock: EngineClock(
                now: { transport.now.offset }, date: { EngineHarness.date },
                schedule: { transport.schedule(after: $0, $1) }),
            digests: OpenSSLDigests())
        configure(&configuration)
        engine = try DownloadEngine(transport: transport, configuration: configuration, coordinator: coordinator)
        recorder = EventRecorder(engine)
        let completions = self.completions
        engine.taskCompletionHandler = { url, result in completions.withLock { $0.append((url, result)) } }
    }

    deinit { scratch.remove() }

    func url(_ path: String) -> String { Self.host + path }

    /// Serves a generated body on `path`, with an ETag when given.
    @discardableResult
    func serve(_ path: String, count: Int64, seed: UInt64 = 7, entityTag: String? = "\"v1\"") -> MockBody {
        let body = MockBody.generated(seed: seed, count: count)
        server.setRoute(.file(body, entityTag: entityTag.map(MockEntityTag.fixed) ?? .none), for: path)
        return body
    }

    /// The download directory's path.
    var downloads: String { engine.directory.path }

    /// The names in the download directory, hidden ones included, sorted.
    var files: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? []).sorted() }

    /// The visible names only.
    var visibleFiles: [String] { files.filter { !$0.hasPrefix(".") } }

    /// The bytes of a file in the download directory.
    func bytes(of name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: downloads + "/" + name).map { [UInt8]($0) }
    }

    /// The bytes of a task's temporary file.
    func temporaryBytes(of url: String) -> [UInt8]? {
        engine.temporaryFilePath(ofTask: url).flatMap { FileManager.default.contents(atPath: $0) }.map { [UInt8]($0) }
    }

    /// The completions delivered so far.
    var completed: [(String, Result<URL, FailureReason>)] { completions.withLock { $0 } }

    /// The GET requests received for a path, with their Range and If-Range.
    func ranges(_ path: String) -> [String] {
        server.requests(for: path).filter { $0.method == "GET" }.map { request in
            [request.headers["Range"], request.headers["If-Range"]].map { $0 ?? "-" }.joined(separator: " ")
        }
    }

    /// Advances the clock in steps, for throttled routes.
    func advance(_ duration: Duration) { transport.advance(by: duration) }

    func runUntilIdle() { transport.runUntilIdle() }
}

/// Collects an engine's events from its `AsyncSequence`, and waits for them with a timeout.
final class EventRecorder: Sendable {
    private let log: EventLog<EngineEvent>

    init(_ engine: DownloadEngine) { log = EventLog(engine.events()) }

    /// The events so far.
    var events: [EngineEvent] { log.events }

    /// Waits until the events satisfy `predicate`; returns them (checked with `#expect`).
    @discardableResult
    func wait(
        timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation,
        until predicate: @escaping @Sendable ([EngineEvent]) -> Bool
    ) async -> [EngineEvent] {
        let (satisfied, events) = await log.wait(timeout: timeout, until: predicate)
        #expect(satisfied, "timed out waiting for events; got \(events)", sourceLocation: sourceLocation)
        return events
    }

    /// Waits for at least `count` events of one task and returns that task's events.
    @discardableResult
    func wait(for url: String, count: Int, sourceLocation: SourceLocation = #_sourceLocation) async -> [EngineEvent] {
        await wait(sourceLocation: sourceLocation) { $0.filter { $0.urlString == url }.count >= count }
            .filter { $0.urlString == url }
    }
}

/// A mutex in a class, so that closures can share it.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Locked<Value>
    init(_ value: Value) { mutex = Locked(value) }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { value in
            var copy = value
            defer { value = copy }
            return body(&copy)
        }
    }
}

/// Runs `body` on a new thread (not the cooperative pool) and returns its result.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}
