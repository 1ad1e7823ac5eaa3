import Foundation
import Peregrine
import PeregrineCore
import PeregrineMockTransport
import Synchronization
import TestSupport
import Testing

/// A `DownloadManager` on a manual `MockTransport` (its virtual clock is the engine's clock), an
/// in-memory store and a fresh state directory, with an event recorder.
final class ManagerHarness: Sendable {
    static let host = "http://mock.test"
    static let date = Date(timeIntervalSince1970: 1_700_000_000)

    let server: MockServer
    let transport: MockTransport
    let scratch: TemporaryDirectory
    let store: InMemoryTaskStore
    let manager: DownloadManager
    let recorder: ManagerEventRecorder

    /// A harness; `snapshot` seeds the store (a second run of the same manager).
    init(
        manualMode: Bool = false, snapshot: StoreSnapshot = StoreSnapshot(), scratch: TemporaryDirectory? = nil,
        server: MockServer = MockServer(),
        _ configure: (inout DownloadManager.Configuration) -> Void = { _ in }
    ) throws {
        self.server = server
        let transport = MockTransport(server: server, mode: .manual)
        self.transport = transport
        // Removed once the last harness sharing it (a second run of the same manager) is gone.
        let scratch = try scratch ?? TemporaryDirectory(prefix: "peregrine-manager", removedWhenReleased: true)
        self.scratch = scratch
        let store = InMemoryTaskStore(identifier: "test", snapshot: snapshot)
        self.store = store
        var configuration = DownloadManager.Configuration(
            downloadDirectory: scratch.path("downloads"), stateDirectory: scratch.path("state"), transport: transport,
            storeFactory: { _, _ in store })
        configuration.clock = EngineClock(
            now: { transport.now.offset }, date: { ManagerHarness.date },
            schedule: { transport.schedule(after: $0, $1) })
        configuration.listClock = { ManagerHarness.date }
        configure(&configuration)
        manager = try DownloadManager(identifier: "test", manualMode: manualMode, configuration: configuration)
        recorder = ManagerEventRecorder(manager)
    }

    func url(_ path: String) -> String { Self.host + path }

    /// Serves a generated body on `path`, with an ETag.
    @discardableResult
    func serve(_ path: String, count: Int64, seed: UInt64 = 7) -> MockBody {
        let body = MockBody.generated(seed: seed, count: count)
        server.setRoute(.file(body, entityTag: .fixed("\"v1\"")), for: path)
        return body
    }

    /// Serves `count` files `/f0.bin` … and returns their URLs.
    func serveFiles(_ count: Int, size: Int64 = 1000, prefix: String = "f", ext: String = "bin") -> [String] {
        (0..<count).map { index in
            let path = "/\(prefix)\(index).\(ext)"
            serve(path, count: size + Int64(index), seed: UInt64(index + 1))
            return url(path)
        }
    }

    /// Runs every transfer step now.
    func runUntilIdle() { transport.runUntilIdle() }

    /// The state of a task.
    func state(_ url: String) -> DownloadState { manager.downloadState(ofTask: url) }

    /// What the store holds now.
    var snapshot: StoreSnapshot { (try? store.load()) ?? StoreSnapshot() }
}

/// Collects a manager's events and waits for them with a timeout.
final class ManagerEventRecorder: Sendable {
    private let log: EventLog<DownloadManagerEvent>

    init(_ manager: DownloadManager) { log = EventLog(manager.events()) }

    var events: [DownloadManagerEvent] { log.events }

    /// Waits until the events satisfy `predicate` (an expectation fails on timeout).
    @discardableResult
    func wait(
        timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation,
        until predicate: @escaping @Sendable ([DownloadManagerEvent]) -> Bool
    ) async -> [DownloadManagerEvent] {
        let (satisfied, events) = await log.wait(timeout: timeout, until: predicate)
        #expect(satisfied, "timed out waiting for events; got \(events)", sourceLocation: sourceLocation)
        return events
    }

    /// Waits for an engine event of a task matching `match`.
    @discardableResult
    func waitForTask(
        _ url: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ match: @escaping @Sendable (EngineEvent) -> Bool
    ) async -> [DownloadManagerEvent] {
        await wait(sourceLocation: sourceLocation) { events in
            events.contains { event in
                if case .task(let taskEvent) = event, taskEvent.urlString == url { return match(taskEvent) }
                return false
            }
        }
    }
}

/// A value behind a mutex, shareable by closures.
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

extension DownloadState {
    /// Whether the state is `failed`, whatever the reason.
    var isFailed: Bool {
        if case .failed = self { return true }
        return false
    }
}

/// The first value of `stream`, or nil when none came within `timeout`.
func firstValue<T: Sendable>(_ stream: AsyncStream<T>, timeout: Duration = .seconds(20)) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask {
            for await value in stream { return value }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
