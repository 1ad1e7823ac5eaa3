import Logging
import PeregrineEngine
import PeregrineStorage
import PeregrineTransport
import Synchronization

/// The engine on a store: a persistent, crash-repairing download queue, without the facade.
///
/// Every change of the engine's task records goes to the ``TaskStore`` as it happens. Opened
/// again on the same store, the queue takes every task back into the engine: interrupted
/// downloads come back `stopped` with their resume records (or `pending` when their partial
/// file is gone), a file placed before a crash is adopted, never downloaded again. A task's
/// `finished` or `failed` event on ``events()`` comes only once the store has recorded it, so a
/// program that exits on it finds it saved.
///
/// This is what the ``DownloadEngine`` plus a store give without the lists, trash, thumbnails
/// and meta info of the `Peregrine` facade, and without linking what the facade links (libcurl,
/// OpenSSL, image codecs): pick the transport, the store and the digests yourself.
///
/// ```swift
/// let store = try JSONTaskStore(identifier: "queue", configuration: StoreConfiguration(rootDirectory: state))
/// let queue = try PersistentQueue(
///     transport: transport, configuration: DownloadEngine.Configuration(directory: downloads), store: store)
/// queue.engine.download([DownloadItem("https://example.com/a.iso")])
/// for await event in queue.events() { … }
/// try queue.close()
/// ```
public final class PersistentQueue: Sendable {
    /// The engine: add, pause, resume and query tasks through it.
    public let engine: DownloadEngine
    /// The store every change goes to.
    public let store: any TaskStore
    /// What opening did with the stored tasks: taken back, recovered from an interruption,
    /// refused.
    public let restoreResult: RestoreResult
    /// What loading had to repair (the store's repairs, records the engine refused), for the log.
    public let loadRepairs: [String]

    private let recorder: StoreRecorder

    /// Opens a queue on `store`: loads it and takes its tasks back into a new engine. The
    /// configuration's ``DownloadEngine/Configuration/recordObserver`` and
    /// ``DownloadEngine/Configuration/eventObserver`` are the queue's own.
    ///
    /// - Throws: ``PersistentQueueError`` when the store cannot be read or the download
    ///   directory cannot be made.
    public init(
        transport: any Transport, configuration: DownloadEngine.Configuration, store: any TaskStore
    ) throws(PersistentQueueError) {
        let snapshot: StoreSnapshot
        do {
            snapshot = try store.load()
        } catch {
            throw .store(error)
        }
        let recorder = StoreRecorder(store: store, logger: configuration.logger)
        var configuration = configuration
        configuration.recordObserver = recorder
        configuration.eventObserver = recorder
        do {
            engine = try DownloadEngine(transport: transport, configuration: configuration)
        } catch {
            throw .engine(error)
        }
        self.store = store
        self.recorder = recorder
        restoreResult = engine.restore(snapshot.tasks.map(\.engineRecord))
        loadRepairs = snapshot.repairs + restoreResult.rejected.map { "task not restored: \($0)" }
        for repair in loadRepairs { configuration.logger.warning("load repair", metadata: ["repair": "\(repair)"]) }
    }

    deinit {
        engine.shutDown()
        if (try? store.close()) != nil { engine.removePlacedTemporaryNames() }
    }

    /// Every engine event from now on, in order; a task's `finished` and `failed` events (and
    /// those after them) once the store has recorded the ending. Each call returns a new
    /// sequence that buffers without bound: iterate it or let it go.
    public func events() -> AsyncStream<EngineEvent> { recorder.broadcaster.subscribe() }

    /// The last error the store reported while recording a change, if any.
    public var lastStoreError: StoreError? { recorder.lastError.withLock { $0 } }

    /// Writes and syncs every recorded change now.
    public func save() throws(StoreError) {
        try store.save()
        engine.removePlacedTemporaryNames()
    }

    /// Stops every transfer (keeping resume records, so that the next queue on the store goes
    /// on with Range), then saves and closes the store.
    public func close() throws(StoreError) {
        engine.shutDown()
        try store.close()
        engine.removePlacedTemporaryNames()
        recorder.broadcaster.finish()
    }
}

/// Why a ``PersistentQueue`` could not be opened.
public enum PersistentQueueError: Error, Sendable, CustomStringConvertible {
    /// The store could not be read.
    case store(StoreError)
    /// The engine could not start (its download directory cannot be made).
    case engine(EngineError)

    public var description: String {
        switch self {
        case .store(let error): "cannot load the store: \(error)"
        case .engine(let error): "cannot start the engine: \(error)"
        }
    }
}

/// Turns the engine's record changes into store changes, in sequence order, and holds endings'
/// events until the store has them.
final class StoreRecorder: TaskRecordObserver, EngineEventObserver {
    private struct State {
        var sequences: [String: UInt64] = [:]
        var states: [String: DownloadState] = [:]
        var endings = EndingGate()
    }

    let broadcaster = EventBroadcaster()
    let lastError = Mutex<StoreError?>(nil)
    private let state = Mutex(State())
    private let store: any TaskStore
    private let logger: Logger

    init(store: any TaskStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    func engineDidEmit(_ events: [EngineEvent]) -> (@Sendable () -> Void)? {
        state.withLock { state in broadcaster.yield(events.filter { state.endings.admit($0) }) }
        return nil
    }

    func engineDidChange(_ changes: [TaskRecordChange]) {
        record(changes, engineWaits: nil)
    }

    func engineDidChange(_ changes: [TaskRecordChange], whenDurable: @escaping @Sendable () -> Void) {
        record(changes, engineWaits: whenDurable)
    }

    /// Writes the changes under the lock (so the store gets them in sequence order); endings
    /// count as recorded once synced, and `engineWaits` runs then.
    private func record(_ changes: [TaskRecordChange], engineWaits: (@Sendable () -> Void)?) {
        let call = SyncCall()
        state.withLock { state in
            var storeChanges: [StoreChange] = []
            var endings: [String: Int] = [:]
            var released: [EngineEvent] = []
            for change in changes.sorted(by: { $0.sequence < $1.sequence }) {
                let url = change.urlString
                var isEnding = false
                if case .upsert(let record) = change.kind {
                    switch record.state {
                    case .finished, .failed: isEnding = true
                    default: break
                    }
                }
                if let last = state.sequences[url], last >= change.sequence {
                    // Superseded by a record already stored: the ending is as good as recorded.
                    if isEnding { state.endings.countRecorded(url, 1) }
                    released += state.endings.release(url)
                    continue
                }
                state.sequences[url] = change.sequence
                switch change.kind {
                case .upsert(let record):
                    if isEnding, state.states[url] != record.state { endings[url, default: 0] += 1 }
                    state.states[url] = record.state
                    storeChanges.append(.putTask(StoredTask(record)))
                case .remove:
                    state.states[url] = nil
                    storeChanges.append(.removeTask(urlString: url))
                }
                released += state.endings.release(url)
            }
            if endings.isEmpty, engineWaits == nil {
                write(storeChanges)
            } else {
                let recorded = endings
                let written = write(storeChanges) { [weak self] error in
                    if let error { self?.failed(error) }
                    guard !call.callback(durable: error == nil) else { return }
                    if error == nil, let engineWaits { engineWaits() }
                    self?.endingsRecorded(recorded)
                }
                // Not written at all, or already synced on this thread: the events need not wait.
                if call.returned() || !written {
                    for (url, count) in endings { state.endings.countRecorded(url, count) }
                    for url in endings.keys { released += state.endings.release(url) }
                }
            }
            broadcaster.yield(released)
        }
        // A store that synced on this thread, under the lock: the engine is called after it.
        if let engineWaits, call.wasDurableEarly { engineWaits() }
    }

    private func endingsRecorded(_ endings: [String: Int]) {
        state.withLock { state in
            var released: [EngineEvent] = []
            for (url, count) in endings {
                state.endings.countRecorded(url, count)
                released += state.endings.release(url)
            }
            broadcaster.yield(released)
        }
    }

    private func write(_ changes: [StoreChange]) {
        guard !changes.isEmpty else { return }
        do {
            try store.record(changes)
        } catch {
            failed(error)
        }
    }

    private func write(_ changes: [StoreChange], whenDurable: @escaping @Sendable (StoreError?) -> Void) -> Bool {
        do {
            try store.record(changes, whenDurable: whenDurable)
            return true
        } catch {
            failed(error)
            return false
        }
    }

    private func failed(_ error: StoreError) {
        lastError.withLock { $0 = error }
        logger.error("store failed to record changes", metadata: ["error": "\(error)"])
    }
}

/// Whether a store called back before `record` returned (on the caller's thread, under its lock).
private final class SyncCall: Sendable {
    private let state = Mutex((returned: false, calledEarly: false, durableEarly: false))

    /// The callback ran; true when `record` had not returned yet.
    func callback(durable: Bool) -> Bool {
        state.withLock { call in
            call.calledEarly = !call.returned
            call.durableEarly = call.calledEarly && durable
            return call.calledEarly
        }
    }

    /// `record` returned; true when the callback already ran.
    func returned() -> Bool {
        state.withLock { call in
            call.returned = true
            return call.calledEarly
        }
    }

    var wasDurableEarly: Bool { state.withLock { $0.durableEarly } }
}
