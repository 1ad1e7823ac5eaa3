#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `DownloadManager` set up for an app's tests: files from an in-memory server on a manual
/// virtual clock (``runUntilIdle()`` and ``advance(by:)`` drive it, so nothing depends on real
/// time), an in-memory store, a scratch directory for the downloads and the state, and a
/// recorder of the manager's events.
///
/// ```swift
/// let bed = try ManagerTestBed()
/// defer { bed.remove() }
/// bed.serve("/report.pdf", count: 200_000)
/// let handle = try bed.manager.download(bed.url("/report.pdf"))
/// bed.runUntilIdle()                         // the transfer runs here, on this thread
/// let file = try await handle.value          // the downloaded file's URL
/// ```
///
/// The manager's engine clock is the transport's virtual clock, and its list clock (add times,
/// add-time sections) is a fixed ``date``. ``restarted()`` is the next run of the same app: a
/// new manager on what the store holds, as after a quit or a crash.
public final class ManagerTestBed: Sendable {
    /// The host every served file is under.
    public static let host = "http://mock.test"

    /// The manager's identifier.
    public let identifier: String
    /// Where the downloads (`downloads/`) and the manager's state go.
    public let scratch: ScratchDirectory
    /// The in-memory server: routes, faults, throttles, and the requests it saw.
    public let server: MockServer
    /// The transport, in manual mode: transfers run only inside ``runUntilIdle()`` and
    /// ``advance(by:)``.
    public let transport: MockTransport
    /// The store; ``restarted()`` starts from what it holds.
    public let store: InMemoryTaskStore
    /// The manager under test.
    public let manager: DownloadManager
    /// The manager's events from its creation on.
    public let events: EventRecorder<DownloadManagerEvent>
    /// The wall-clock date the manager sees (add times).
    public let date: Date
    private let configure: @Sendable (inout DownloadManager.Configuration) -> Void
    private let manualMode: Bool

    /// A manager on a fresh scratch directory, server and store.
    ///
    /// - Parameters:
    ///   - identifier: the manager's identifier.
    ///   - manualMode: whether its default list starts in manual mode.
    ///   - date: the date its list clock reports.
    ///   - configure: changes to the configuration (limits, retry policy, thumbnails …); the
    ///     directories, transport, store and clocks are the test bed's.
    public convenience init(
        identifier: String = "test", manualMode: Bool = false,
        date: Date = Date(timeIntervalSince1970: 1_700_000_000),
        configure: @escaping @Sendable (inout DownloadManager.Configuration) -> Void = { _ in }
    ) throws {
        try self.init(
            identifier: identifier, manualMode: manualMode, date: date, scratch: ScratchDirectory(),
            server: MockServer(), store: InMemoryTaskStore(identifier: identifier), configure: configure)
    }

    private init(
        identifier: String, manualMode: Bool, date: Date, scratch: ScratchDirectory, server: MockServer,
        store: InMemoryTaskStore, configure: @escaping @Sendable (inout DownloadManager.Configuration) -> Void
    ) throws {
        self.identifier = identifier
        self.manualMode = manualMode
        self.date = date
        self.scratch = scratch
        self.server = server
        self.store = store
        self.configure = configure
        let transport = MockTransport(server: server, mode: .manual)
        self.transport = transport
        var configuration = DownloadManager.Configuration(
            downloadDirectory: scratch.path("downloads"), stateDirectory: scratch.path("state"),
            transport: transport, storeFactory: { _, _ in store })
        configuration.clock = EngineClock(
            now: { transport.now.offset }, date: { date }, schedule: { transport.schedule(after: $0, $1) })
        configuration.listClock = { date }
        configure(&configuration)
        // The parts the test bed's drivers rely on stay its own.
        configuration.transport = transport
        configuration.storeFactory = { _, _ in store }
        manager = try DownloadManager(identifier: identifier, manualMode: manualMode, configuration: configuration)
        events = EventRecorder(manager.events())
    }

    /// The next run of the same app: a new manager and transport on the same server, with a
    /// store that holds what this one's holds, in the same scratch directory. Use it after this
    /// bed's manager is released, as a relaunched app would.
    public func restarted() throws -> ManagerTestBed {
        try ManagerTestBed(
            identifier: identifier, manualMode: manualMode, date: date, scratch: scratch, server: server,
            store: InMemoryTaskStore(identifier: identifier, snapshot: (try? store.load()) ?? StoreSnapshot()),
            configure: configure)
    }

    /// The URL string of `path` on the test server (`/a.bin` → `http://mock.test/a.bin`).
    public func url(_ path: String) -> String { Self.host + path }

    /// Serves `count` generated bytes (the same for the same `seed`) at `path`, with an ETag, so
    /// that downloads of it can resume.
    @discardableResult
    public func serve(_ path: String, count: Int64, seed: UInt64 = 1) -> MockBody {
        let body = MockBody.generated(seed: seed, count: count)
        server.setRoute(.file(body, entityTag: .fixed("\"\(seed)\"")), for: path)
        return body
    }

    /// Runs every transfer step that is due, until nothing is left to run now (the virtual
    /// clock jumps over throttled or delayed parts). Events are delivered before it returns.
    public func runUntilIdle() { transport.runUntilIdle() }

    /// Moves the virtual clock `duration` ahead, running what falls due on the way: for retries
    /// and timeouts, or to stop a throttled download in the middle.
    public func advance(by duration: Duration) { transport.advance(by: duration) }

    /// Waits until the task at `urlString` finished or failed, and returns its last event.
    ///
    /// - Throws: ``TestKitError`` when neither came within `timeout`.
    @discardableResult
    public func waitForEnd(of urlString: String, timeout: Duration = .seconds(20)) async throws(TestKitError)
        -> EngineEvent
    {
        let events = try await events.wait(timeout: timeout) { events in
            events.contains { Self.isEnd($0, of: urlString) }
        }
        for case .task(let event) in events.reversed() where Self.isEnd(.task(event), of: urlString) {
            return event
        }
        throw TestKitError("no end event of \(urlString)")
    }

    private static func isEnd(_ event: DownloadManagerEvent, of urlString: String) -> Bool {
        switch event {
        case .task(.finished(let url, _)), .task(.failed(let url, _)): url == urlString
        default: false
        }
    }

    /// Removes the scratch directory (downloads and state).
    public func remove() { scratch.remove() }
}
