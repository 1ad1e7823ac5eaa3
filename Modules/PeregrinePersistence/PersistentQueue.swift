import Logging
import PeregrineCore
import PeregrineEngine
import PeregrineStorage
import PeregrineTransport
import Synchronization

/// The engine on a store: a persistent, crash-repairing download queue, without the facade.
///
/// Every change of the engine's task records goes to the `TaskStore` as it happens. Opened
/// again on the same store, the queue takes every task back into the engine: interrupted
/// downloads come back `stopped` with their resume records (or `pending` when their partial
/// file is gone), a file placed before a crash is adopted, never downloaded again. A task's
/// `finished` or `failed` event on ``events()`` comes only once the store has recorded it, so a
/// program that exits on it finds it saved.
///
/// This is what the `DownloadEngine` plus a store give without the lists, trash, thumbnails
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
    /// queue observes the engine itself: the configuration's
    /// `DownloadEngine.Configuration.recordObserver` and `DownloadEngine.Configuration.eventObserver`
    /// are not used.
    ///
    /// - Throws: ``PersistentQueueError`` when the store cannot be read or the download
    ///   directory cannot be made.
    public convenience init(
        transport: any Transport, configuration: DownloadEngine.Configuration, store: any TaskStore
    ) throws(PersistentQueueError) {
        let snapshot: StoreSnapshot
        do {
            snapshot = try store.load()
        } catch {
            throw .store(error)
        }
        try self.init(transport: transport, configuration: configuration, store: store, snapshot: snapshot)
        for repair in loadRepairs { configuration.logger.warning("load repair", metadata: ["repair": "\(repair)"]) }
    }

    /// Opens a queue on a store already loaded, with a layer that adds to what is recorded and
    /// published (the `Peregrine` facade: its lists, display names and meta info).
    package init(
        transport: any Transport, configuration: DownloadEngine.Configuration, store: any TaskStore,
        snapshot: StoreSnapshot, delegate: (any QueueRecordingDelegate)? = nil, drain: OrderedDrain = OrderedDrain(),
        killPoint: StaticString = "queue.durable", coordinator: Coordinator = Coordinator()
    ) throws(PersistentQueueError) {
        let recorder = StoreRecorder(
            store: store, logger: configuration.logger, delegate: delegate, drain: drain, killPoint: killPoint)
        var configuration = configuration
        configuration.sectionObserver = recorder
        configuration.recordObserver = nil
        configuration.eventObserver = nil
        do {
            engine = try DownloadEngine(transport: transport, configuration: configuration, coordinator: coordinator)
        } catch {
            throw .engine(error)
        }
        self.store = store
        self.recorder = recorder
        restoreResult = engine.restore(snapshot.tasks.map(\.engineRecord))
        loadRepairs = snapshot.repairs + restoreResult.rejected.map { "task not restored: \($0)" }
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

    /// Records changes beside the engine's (a layer's lists, say), in order with them: `changes`
    /// is called when their turn comes, so that what it reads is the latest. Returns once they
    /// are synced, or written when the calling task runs a ``SyncBatch`` (synced by its end). A
    /// failure is logged and kept in ``lastStoreError``.
    package func record(_ changes: @escaping @Sendable () -> [StoreChange]) {
        recorder.recordLayerChanges(changes)
    }

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

/// What a layer over a ``PersistentQueue`` adds to its recording. The recorder calls it from
/// its ``OrderedDrain`` — one call at a time, in the order of the engine's changes, outside every
/// step of the engine's coordinator — so it may take a step (or its own lock) inside; it must
/// never wait there for another thread.
package protocol QueueRecordingDelegate: Sendable {
    /// The store changes for fresh engine changes, in sequence order.
    func storeChanges(for changes: [TaskRecordChange]) -> [StoreChange]
    /// Publishes engine events, in order (those the queue released: endings once recorded);
    /// what it returns runs once the drain is done.
    func publish(_ events: [EngineEvent]) -> (@Sendable () -> Void)?
    /// The store failed to record changes.
    func storeFailed(_ error: StoreError)
}

/// Turns the engine's record changes into store changes and holds endings' events until the
/// store has them. The engine puts each section in the recorder's drain inside the step that
/// ends it, so in the steps' order; the drain does the work — publishing, the layer's
/// additions, the store write — with no lock held across a call into another component.
final class StoreRecorder: EngineSectionObserver {
    let broadcaster = EventBroadcaster<EngineEvent>()
    let lastError = Locked<StoreError?>(nil)
    /// Taken by the drain's items only, one at a time: a lock for `Sendable`, never contended.
    private let gate = Locked(EndingGate())
    let drain: OrderedDrain
    private let store: any TaskStore
    private let logger: Logger
    private let delegate: (any QueueRecordingDelegate)?
    private let killPoint: StaticString

    init(
        store: any TaskStore, logger: Logger, delegate: (any QueueRecordingDelegate)?, drain: OrderedDrain,
        killPoint: StaticString
    ) {
        self.store = store
        self.logger = logger
        self.delegate = delegate
        self.drain = drain
        self.killPoint = killPoint
    }

    /// Puts a section in line (inside the engine's step): its events are published (endings
    /// held until recorded), then its changes recorded, after every section before it. What it
    /// returns runs the drain after the step; with changes it returns once they are written
    /// (synced when durable, unless the calling task runs a ``SyncBatch``). `whenDurable`, when
    /// given, runs once they are synced (the engine removes placed files' temporary names then).
    func engineDidSeal(
        events: [EngineEvent], changes: [TaskRecordChange], beforeRecording: (@Sendable () -> Void)?,
        whenDurable: (@Sendable () -> Void)?
    ) -> @Sendable () -> (@Sendable () -> Void)? {
        let batch = changes.isEmpty ? nil : SyncBatch.current
        let ticket = drain.enqueue { [self] in
            beforeRecording?()
            let published =
                events.isEmpty
                ? nil : publish(gate.withLock { gate in events.filter { gate.admit($0) } })
            guard !changes.isEmpty else {
                guard let whenDurable else { return published }
                return {
                    whenDurable()
                    published?()
                }
            }
            let written = SyncBatch.$current.withValue(batch) {
                write(changes, endings: EndingGate.endings(in: events), engineWaits: whenDurable)
            }
            guard let published else { return written }
            guard let written else { return published }
            return {
                published()
                written()
            }
        }
        let waits = !changes.isEmpty
        return { [drain] in
            drain.finish(ticket, wait: waits)
            return nil
        }
    }

    private func write(
        _ changes: [TaskRecordChange], endings: [String: Int], engineWaits: (@Sendable () -> Void)?
    ) -> (@Sendable () -> Void)? {
        let storeChanges =
            delegate?.storeChanges(for: changes)
            ?? changes.map { change in
                switch change.kind {
                case .upsert(let record): .putTask(StoredTask(record))
                case .remove(let url): .removeTask(urlString: url)
                }
            }
        let outcome = DurableWrite.write(
            storeChanges, to: store, endings: endings, engineWaits: engineWaits, killPoint: killPoint,
            failed: { [weak self] in self?.failed($0) },
            recorded: { [weak self] in self?.endingsRecorded($0) })
        let published = outcome.endingsRecordedNow ? publish(gate.withLock { $0.recorded(endings) }) : nil
        let waits = outcome.engineWaitsAfterLock ? engineWaits : nil
        guard waits != nil || published != nil else { return nil }
        return { [killPoint] in
            if let waits {
                KillPoint.reach(killPoint)
                waits()
            }
            published?()
        }
    }

    /// The store synced endings (on its own thread): their held events may go, in order.
    private func endingsRecorded(_ endings: [String: Int]) {
        drain.submit(wait: false) { [self] in publish(gate.withLock { $0.recorded(endings) }) }
    }

    /// Records a layer's changes (its lists, say), made when their turn comes so that they are
    /// the latest; returns once written (see ``PersistentQueue/record(_:)``).
    func recordLayerChanges(_ changes: @escaping @Sendable () -> [StoreChange]) {
        drain.record(changes, in: store) { [weak self] in self?.failed($0) }
    }

    /// Hands events to the delegate, else to the queue's subscribers.
    private func publish(_ events: [EngineEvent]) -> (@Sendable () -> Void)? {
        guard !events.isEmpty else { return nil }
        guard let delegate else {
            broadcaster.yield(events)
            return nil
        }
        return delegate.publish(events)
    }

    func failed(_ error: StoreError) {
        lastError.withLock { $0 = error }
        logger.error("store failed to record changes", metadata: ["error": "\(error)"])
        delegate?.storeFailed(error)
    }
}
