import Logging
import Peregrine
import PeregrineCore
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Answers aria2's JSON-RPC methods (and Peregrine's own, `peregrine.*`) on a
/// `DownloadManager`: the part of the service without sockets, tested on its own.
///
/// Thread-safe: calls may come from any number of connections at once. The manager's own
/// operations are thread-safe; the GID table, the options and the removed downloads sit
/// behind one lock, never held while the manager works.
public final class RPCDispatcher: Sendable {
    /// The manager every method works on.
    public let manager: DownloadManager
    let configuration: RPCServiceConfiguration
    let confinement: PathConfinement
    let logger: Logger
    let hub: NotificationHub
    let sessionID: String
    /// Called by `aria2.shutdown` and `aria2.forceShutdown` after they answered.
    let shutdownRequest = Locked<(@Sendable () -> Void)?>(nil)
    let state: Locked<RegistryState>
    /// The port the server listens on, once it does (`getGlobalOption` reports it).
    let listeningPort = Locked<Int?>(nil)
    /// Counts the changes of the lists' shape, for the dashboard (`peregrine.listRevision`).
    let listRevision = ListRevision()
    /// The downloads by status, kept between changes (`tellActive`, `tellWaiting`, `getGlobalStat`).
    let statusIndexCache = StatusIndexCache()
    /// A fleet service's client calls now waiting for the database (``fleetCallsWaitingLimit``).
    let fleetCallsWaiting = Locked(0)
    /// Whether ``beginDrain()`` was called.
    let draining = Locked(false)
    /// What `/metrics` reports.
    public let metrics = ServiceMetrics(
        methods: RPCDispatcher.aria2Methods + RPCDispatcher.peregrineMethods + RPCDispatcher.dashboardMethods)

    /// What the service keeps beside the manager.
    struct RegistryState: Sendable {
        var table = GIDTable()
        var generator = SystemRandomNumberGenerator()
        var options: [GID: DownloadOptions] = [:]
        var paused: Set<GID> = []
        var removed: [GID: RemovedDownload] = [:]
        /// Stopped downloads whose results were removed or purged (`numStoppedTotal` counts them).
        var forgottenResults = 0
        var stopOrder: [GID: UInt64] = [:]
        var nextStop: UInt64 = 1
        var meters: [String: SpeedMeter] = [:]
        var global = DownloadOptions(["split": "5", "max-connection-per-server": "1", "max-download-limit": "0"])
        var sharedOptions = SharedOptions()
        /// A fleet service's queue as its list revision last saw it.
        var fleetShape: FleetShape?
    }

    /// A download removed for good: its last status, kept until its result is purged (as aria2
    /// keeps it, in memory only).
    struct RemovedDownload: Sendable {
        var status: JSONObject
        var order: UInt64
    }

    /// Meta info keys the service stores with each task.
    enum MetaKey {
        static let gid = "aria2.gid"
        static let options = "aria2.options"
        static let paused = "aria2.paused"
        /// The paused mark's value, one for every task (`PropertyListValue` is indirect: each
        /// value made anew is an allocation of its own).
        static let pausedMark = PropertyListValue.boolean(true)
    }

    /// The option sets of recent additions: downloads added with equal options (a client sends
    /// its defaults, or `pause`, with every one) share one dictionary of them, and one value for
    /// their meta info, where each kept copies of its own (about 300 bytes a download).
    struct SharedOptions: Sendable {
        private var recent: [(options: DownloadOptions, meta: PropertyListValue)] = []

        /// `options`, and its meta info value, as an equal set seen lately has them.
        mutating func share(_ options: DownloadOptions) -> (options: DownloadOptions, meta: PropertyListValue) {
            if let index = recent.firstIndex(where: { $0.options == options }) {
                let found = recent.remove(at: index)
                recent.append(found)
                return found
            }
            let entry = (options: options, meta: options.metaInfo)
            if recent.count == 8 { recent.removeFirst() }
            recent.append(entry)
            return entry
        }
    }

    /// Creates a dispatcher on `manager` and gives every task it has a GID (the one stored with
    /// it, else a new one).
    init(manager: DownloadManager, configuration: RPCServiceConfiguration, logger: Logger, hub: NotificationHub) {
        self.manager = manager
        self.configuration = configuration
        self.confinement = PathConfinement(root: manager.downloadDirectory)
        self.logger = logger
        self.hub = hub
        var generator = SystemRandomNumberGenerator()
        self.sessionID = (0..<5).map { _ in GID.random(using: &generator).description }.joined().prefix(40).description
        self.state = Locked(RegistryState())
        adoptTasks()
    }

    /// Reads GIDs, options and the paused mark back from the tasks' meta info. In a fleet a
    /// task's GID is the queue's (`GID.fleet`), whatever this service stored or never stored for
    /// it, so that it stays the same on every service and across restarts.
    private func adoptTasks() {
        var newGIDs: [(String, GID)] = []
        var requestOptions: [(String, DownloadOptions)] = []
        let isFleet = configuration.fleetQueue != nil
        for snapshot in manager.engine.tasks() {
            let url = snapshot.urlString
            let meta = manager.metaInfo(ofTask: url) ?? [:]
            var stored: GID?
            if case .string(let text) = meta[MetaKey.gid] { stored = GID(hex: text) }
            if isFleet, stored != GID.fleet(url) { stored = nil }
            state.withLock { state in
                if let gid = stored, state.table.insert(gid, url: url) {
                    if case .dictionary(let stored) = meta[MetaKey.options] {
                        var options = DownloadOptions()
                        for case (let key, .string(let value)) in stored { options.values[key] = value }
                        state.options[gid] = state.sharedOptions.share(options).options
                        requestOptions.append((url, options))
                    }
                    if case .boolean(true) = meta[MetaKey.paused] { state.paused.insert(gid) }
                } else {
                    let (gid, _) = state.table.gid(
                        for: url, preferring: isFleet ? GID.fleet(url) : nil, using: &state.generator)
                    newGIDs.append((url, gid))
                }
            }
        }
        for (url, options) in requestOptions { applyRequestOptions(options, to: url) }
        for (url, gid) in newGIDs { try? manager.updateMetaInfo([MetaKey.gid: .string(gid.description)], forTask: url) }
    }

    /// Starts the unfinished downloads that no client paused (aria2 continues its session).
    func resumeUnfinished() {
        let urls = manager.engine.tasks().compactMap { snapshot -> String? in
            switch snapshot.state {
            case .pending, .stopped, .paused:
                guard !snapshot.isQueued, manager.indexPath(ofTask: snapshot.urlString) != nil else { return nil }
                let paused = state.withLock { state in
                    state.table.gidByURL[snapshot.urlString].map { state.paused.contains($0) } ?? false
                }
                return paused ? nil : snapshot.urlString
            default: return nil
            }
        }
        if !urls.isEmpty { _ = try? manager.resumeTasks(urls) }
    }

    // MARK: GIDs

    /// The GID of a task, made and stored when it has none (a task the application added).
    func gid(of url: String) -> GID {
        // In a fleet, the GID the other services give the same task.
        let preferred = configuration.fleetQueue == nil ? nil : GID.fleet(url)
        let (gid, isNew) = state.withLock { state in
            state.table.gid(for: url, preferring: preferred, using: &state.generator)
        }
        if isNew { try? manager.updateMetaInfo([MetaKey.gid: .string(gid.description)], forTask: url) }
        return gid
    }

    /// What a GID parameter names: a task of the manager, or a download removed for good.
    enum Target {
        case task(GID, String)
        case removed(GID)
    }

    /// Reads a GID parameter as aria2 does: 1 to 16 hex digits, a unique prefix allowed.
    func target(_ text: String) throws(RPCError) -> Target {
        guard GID.isHexPrefix(text) else { throw RPCError.invalidGID(text) }
        let prefix = text.lowercased()
        if configuration.fleetQueue != nil, let exact = GID(hex: prefix) { try adoptFleetGID(exact) }
        return try state.withLock { (state) throws(RPCError) -> Target in
            let gid: GID
            if let exact = GID(hex: prefix) {
                gid = exact
            } else {
                let matches = state.table.matching(prefix: prefix, others: state.removed.keys)
                guard matches.count == 1 else { throw RPCError.gidNotFound(text) }
                gid = matches[0]
            }
            if let url = state.table.urlByGID[gid] { return .task(gid, url) }
            if state.removed[gid] != nil { return .removed(gid) }
            throw RPCError.gidNotFound(text)
        }
    }

    /// In a fleet, a GID another service handed out names a task of the shared queue that this
    /// service never showed a client: a task it holds (the one whose URL the GID is made from,
    /// `GID.fleet`) takes the GID here; else the queue is asked for the task with that key
    /// hash, and its URL takes the GID in memory, as for a task this service added. Only when
    /// the GID is unknown; no lock is held while the manager or the queue is asked.
    private func adoptFleetGID(_ gid: GID) throws(RPCError) {
        guard let queue = configuration.fleetQueue, state.withLock({ $0.table.urlByGID[gid] == nil }) else { return }
        if let url = manager.engine.urlStrings().first(where: { GID.fleet($0) == gid }) {
            _ = self.gid(of: url)
            return
        }
        let found: [String: QueuedTask]
        do throws(StoreError) {
            found = try queue.entries(keyHashes: gid.fleetKeyHashes)
        } catch {
            throw RPCError("The fleet's shared queue is unreachable: \(error.message)")
        }
        // Another URL may share the hash; it takes no GID that is not its own.
        guard let url = found.keys.sorted().first(where: { GID.fleet($0) == gid }) else { return }
        state.withLock { state in _ = state.table.gid(for: url, preferring: gid, using: &state.generator) }
    }

    /// A GID parameter that must name a task of the manager.
    func task(_ text: String) throws(RPCError) -> (GID, String) {
        switch try target(text) {
        case .task(let gid, let url): return (gid, url)
        case .removed: throw RPCError.gidNotFound(text)
        }
    }

    /// Marks (or unmarks) a task as paused by a client, in memory and in its meta info.
    func setPausedByClient(_ paused: Bool, gid: GID, url: String) {
        state.withLock { state in
            if paused { state.paused.insert(gid) } else { state.paused.remove(gid) }
        }
        try? manager.updateMetaInfo([MetaKey.paused: paused ? MetaKey.pausedMark : .boolean(false)], forTask: url)
    }

    /// Hands a download's request options (`header`, `user-agent`, timeouts, credentials,
    /// proxy, retries, over the global ones) to the request table. (Its `max-download-limit` is
    /// the task's speed limit, saved with the task: see ``speedLimit(_:)``.)
    func applyRequestOptions(_ options: DownloadOptions, to url: String) {
        guard let table = configuration.requestTable else { return }
        // A download's own values over the global ones, as aria2 gives new downloads the
        // global options (`max-download-limit` is the task's speed limit, not a cap here).
        var values = state.withLock { $0.global.values }.merging(options.values) { _, own in own }
        values["max-download-limit"] = nil
        table.set(TaskRequestOptions(aria2: values), forTask: url)
    }

    /// A download's speed limit: its own `max-download-limit`, else the global default; nil
    /// for unlimited.
    func speedLimit(_ options: DownloadOptions) -> SpeedLimit? {
        let value = options.values["max-download-limit"] ?? state.withLock { $0.global.values["max-download-limit"] }
        return DownloadOptions.speedLimit(value)
    }

    /// Sends a notification to the WebSocket clients.
    func notify(_ method: String, gid: GID) {
        hub.broadcast(RPCCodec.notification(method, gid: gid).serialized)
    }

    /// Converts a manager error into aria2's error shape.
    static func error(_ error: DownloadManagerError) -> RPCError { RPCError(error.description) }
}
