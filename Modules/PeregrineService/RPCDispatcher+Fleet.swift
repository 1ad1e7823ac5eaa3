import Peregrine
import PeregrineCore
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension RPCDispatcher {
    /// Whether a fleet's queue carries a per-download option to the service that claims the
    /// task: every one but `pause` (a fleet's queue pauses by `aria2.pause`) and secrets
    /// (`http-passwd`), which the shared database would hold in the clear. `dir` is the root
    /// (the only one `addUri` accepts), which every service of the fleet shares: not carried.
    static func fleetCarries(_ option: String) -> Bool {
        !Aria2Option.isSecret(option)
    }

    /// `aria2.addUri` on a service of a fleet (``RPCServiceConfiguration/fleetQueue``): the URL
    /// goes into the shared queue, where any service of the fleet may claim it, with its other
    /// URIs as mirrors and its options, and the answer is its GID (`GID.fleet`). Until a
    /// service claims it, `tellStatus` reports it `waiting`; then as the queue records it (see
    /// ``fleetStatusObject(gid:entry:)``). The claiming service applies the options
    /// (``adoptFleetTask(_:)``).
    func addToFleet(
        _ url: String, options: DownloadOptions, fileName: String?, subdirectory: String?, mirrors: [String],
        position: Int?, queue: any ClaimingTaskQueue
    ) throws(RPCError) -> JSONValue {
        var options = options
        // Each service has its own root: the folder inside it travels as the task's subdirectory.
        options.values["dir"] = nil
        if let unsupported = options.values.keys.filter({ !Self.fleetCarries($0) }).sorted().first {
            throw RPCError("The option \(unsupported) is not carried by the fleet's shared queue.")
        }
        guard position == nil else { throw RPCError("A fleet's shared queue keeps no positions.") }
        // The queue's key is the normalized URL, so that every service (and every spelling of
        // the URL) names the same task.
        let key: String
        var mirrorKeys: [String] = []
        do throws(URLValidationError) {
            key = try DownloadURL(url).normalizedKey
            for mirror in mirrors {
                let mirrorKey = try DownloadURL(mirror).normalizedKey
                if mirrorKey != key, !mirrorKeys.contains(mirrorKey) { mirrorKeys.append(mirrorKey) }
            }
        } catch {
            throw RPCError("Invalid URI: \(error)")
        }
        var task = StoredTask(
            urlString: key, preferredFileName: fileName, state: .pending, addedAt: Date(),
            checksum: options.values["checksum"])
        task.mirrors = mirrorKeys
        task.subdirectory = subdirectory
        // Paused in the queue itself: no service claims it until a client unpauses it.
        if options.values.removeValue(forKey: "pause") == "true" { task.state = .paused }
        task.maxConnections = connections(options, servers: 1 + mirrorKeys.count)
        task.speedLimit = speedLimit(options)?.bytesPerSecond
        if !options.values.isEmpty {
            task.metaInfo[MetaKey.options] = options.metaInfo
        }
        if let batch = FleetBatch.current {
            // A multicall of additions: enqueued with the others once all were checked.
            batch.append(task)
        } else {
            do throws(StoreError) {
                // A URL the queue already has is left as it is; its GID here is the same one.
                _ = try queue.enqueue([task])
            } catch {
                throw RPCError("The fleet's shared queue is unreachable: \(error.message)")
            }
        }
        let gid = state.withLock { state in
            state.table.gid(for: key, preferring: GID.fleet(key), using: &state.generator).0
        }
        return .string(gid.description)
    }

    /// The GID every service of the fleet gives the task of `url` (the queue's key).
    public func gid(ofFleetTask url: String) -> GID { GID.fleet(url) }

    /// Makes a task this service claimed from the fleet's queue this service's download, before
    /// the worker starts it: its GID is the fleet's, and the options it was added with (kept in
    /// its meta info) apply here — the request headers go to the request table, `getOption`
    /// answers them.
    public func adoptFleetTask(_ task: StoredTask) {
        let url = task.urlString
        var options = DownloadOptions()
        if case .dictionary(let stored) = task.metaInfo[MetaKey.options] {
            for case (let key, .string(let value)) in stored { options.values[key] = value }
        }
        // The folder the task was added with, inside this service's root.
        if let subdirectory = task.subdirectory {
            options.values["dir"] = manager.downloadDirectory + "/" + subdirectory
        }
        state.withLock { state in
            let (gid, _) = state.table.gid(for: url, preferring: GID.fleet(url), using: &state.generator)
            if !options.values.isEmpty { state.options[gid] = state.sharedOptions.share(options).options }
        }
        applyRequestOptions(options, to: url)
    }

    /// A queue call, its failure as the RPC error every fleet call gives.
    static func fleetCall<Result>(_ body: () throws(StoreError) -> Result) throws(RPCError) -> Result {
        do throws(StoreError) {
            return try body()
        } catch {
            throw RPCError("The fleet's shared queue is unreachable: \(error.message)")
        }
    }

    /// The status object of a task of the queue as `entry` shows it: this service's own when it
    /// holds the task (the lease is its), else the queue's (``fleetStatusObject(gid:entry:)``).
    func fleetListObject(_ entry: QueuedTask, queue: any ClaimingTaskQueue) -> JSONObject {
        let url = entry.task.urlString
        let known = state.withLock { $0.table.gidByURL[url] }
        if isCurrentHere(entry, queue: queue) { return localStatusObject(gid: known ?? gid(of: url), entry: entry) }
        return fleetStatusObject(gid: known ?? GID.fleet(url), entry: entry)
    }

    /// This service's status object of a task of the queue whose copy here is current, with
    /// the holder (`peregrine.holder`) as for a task held elsewhere.
    func localStatusObject(gid: GID, entry: QueuedTask) -> JSONObject {
        var object = statusObject(gid: gid, url: entry.task.urlString)
        if let holder = entry.holder { object["peregrine.holder"] = .string(holder) }
        return object
    }

    /// Whether this service's own copy of a task of the queue tells its current status: the
    /// service holds it, or nobody does and its copy is in the state the queue recorded (it
    /// ended it here, or paused it). Else the queue's record is the current one.
    func isCurrentHere(_ entry: QueuedTask, queue: any ClaimingTaskQueue) -> Bool {
        guard let snapshot = manager.engine.task(entry.task.urlString) else { return false }
        if entry.holder == queue.owner { return true }
        return entry.holder == nil && status(of: snapshot) == Self.fleetProgress(entry.task).status
    }

    /// `tellActive` of a fleet service: every task a service of the fleet holds, in the order
    /// they were added.
    func fleetTellActive(keys: [String]?, queue: any ClaimingTaskQueue) throws(RPCError) -> JSONValue {
        let held = try Self.fleetCall { () throws(StoreError) in
            try queue.page(.held, offset: 0, count: Self.fleetListLimit)
        }
        return .array(held.map { Self.filter(fleetListObject($0, queue: queue), keys: keys) })
    }

    /// `tellWaiting` of a fleet service: the queue's tasks nobody holds, paged as aria2 pages.
    func fleetTellWaiting(offset: Int, num: Int, keys: [String]?, queue: any ClaimingTaskQueue) throws(RPCError)
        -> JSONValue
    {
        let page = try Self.fleetCall { () throws(StoreError) in
            try queue.page(.waiting, offset: offset, count: min(num, Self.fleetListLimit))
        }
        return .array(page.map { Self.filter(fleetListObject($0, queue: queue), keys: keys) })
    }

    /// `tellStopped` of a fleet service: the tasks of the queue that ended (finished or failed
    /// on any service), in the order they ended, paged as aria2 pages.
    func fleetTellStopped(offset: Int, num: Int, keys: [String]?, queue: any ClaimingTaskQueue) throws(RPCError)
        -> JSONValue
    {
        let page = try Self.fleetCall { () throws(StoreError) in
            try queue.page(.ended, offset: offset, count: min(num, Self.fleetListLimit))
        }
        return .array(page.map { Self.filter(fleetListObject($0, queue: queue), keys: keys) })
    }

    /// `removeDownloadResult` of a fleet service: an ended task leaves the queue (its URL may
    /// be added again; its file stays on the service that downloaded it), and this service's
    /// copy, if it has one, is forgotten.
    func fleetRemoveDownloadResult(gid: GID, url: String, queue: any ClaimingTaskQueue) throws(RPCError)
        -> JSONValue
    {
        let forgotten = try Self.fleetCall { () throws(StoreError) in try queue.control([url], .forget) }
        let local = manager.engine.task(url) != nil
        guard forgotten.contains(url) || (local && status(of: url).isStopped) else {
            throw RPCError("Could not remove download result of GID#\(gid)")
        }
        if local {
            try forget(gid: gid, url: url)
        } else {
            state.withLock { $0.table.remove(url: url) }
        }
        return "OK"
    }

    /// `purgeDownloadResult` of a fleet service: every ended task leaves the queue, and this
    /// service forgets its own results.
    func fleetPurgeDownloadResult(queue: any ClaimingTaskQueue) throws(RPCError) -> JSONValue {
        _ = try Self.fleetCall { () throws(StoreError) in try queue.controlAll(.forget) }
        return purgeDownloadResult()
    }

    /// Pauses, resumes or removes a task of the fleet's queue, whoever holds it (its holder
    /// stops it at its next lease renewal); an error when the queue's task is not in a state
    /// that allows it (aria2's "cannot be paused now").
    func fleetControl(
        _ change: QueueControl, gid: GID, url: String, queue: any ClaimingTaskQueue, doing verb: String
    ) throws(RPCError) {
        let changed = try Self.fleetCall { () throws(StoreError) in try queue.control([url], change) }
        guard changed.contains(url) else { throw RPCError("GID#\(gid) cannot be \(verb) now") }
    }

    /// The most status objects one fleet-wide list call builds.
    static let fleetListLimit = 10_000

    /// Sends aria2's `onDownloadComplete` or `onDownloadError` for tasks that services of the
    /// fleet ended, to this service's WebSocket clients, until the calling task is cancelled.
    /// Tasks this service ended itself were notified from its own events and are skipped. A
    /// follower starts at the present: what ended before it started is not sent.
    func followFleet(_ queue: any ClaimingTaskQueue) async {
        var cursor: Int64?
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            do throws(StoreError) {
                if cursor == nil {
                    cursor = try queue.endings(after: nil, limit: 0).cursor
                }
                while let from = cursor {
                    let (tasks, next) = try queue.endings(after: from, limit: 500)
                    cursor = next
                    for entry in tasks { notifyFleetEnding(entry) }
                    if tasks.count < 500 { break }
                }
                backoff = .milliseconds(100)
                _ = await queue.waitForEndings(timeout: .seconds(5))
            } catch {
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
    }

    private func notifyFleetEnding(_ entry: QueuedTask) {
        let url = entry.task.urlString
        // Ended here: the manager's own event sent it.
        if let own = manager.engine.task(url), own.state == entry.task.state { return }
        let gid = state.withLock { $0.table.gidByURL[url] } ?? GID.fleet(url)
        switch entry.task.state {
        case .finished: notify("aria2.onDownloadComplete", gid: gid)
        case .failed: notify("aria2.onDownloadError", gid: gid)
        default: break
        }
    }

    /// `tellStatus`'s object for a task of the fleet's queue as the queue records it: `waiting`
    /// while unclaimed (or its lease expired), `active` while a service holds it
    /// (`peregrine.holder` names that service; progress and speed as of its last lease renewal),
    /// `complete` or `error` once a service finished it.
    func fleetStatusObject(gid: GID, entry: QueuedTask) -> JSONObject {
        let url = entry.task.urlString
        let task = entry.task
        let (status, total, completed) = Self.fleetProgress(task)
        let pieceLength: Int64 = 1 << 20
        let name = task.fileName ?? task.preferredFileName
        var object: JSONObject = [
            "gid": .string(gid.description),
            "status": .string(status.rawValue),
            "totalLength": .string(String(total)),
            "completedLength": .string(String(completed)),
            "uploadLength": "0",
            "downloadSpeed": .string(String(Self.holderSpeed(entry) ?? 0)),
            "uploadSpeed": "0",
            "connections": "0",
            "numPieces": .string(String((total + pieceLength - 1) / pieceLength)),
            "pieceLength": .string(String(pieceLength)),
            // The file is (or will be) on whichever service downloads it, in this folder of its root.
            "dir": .string(task.subdirectory ?? ""),
            "files": [
                [
                    "index": "1", "path": .string(name ?? ""), "length": .string(String(total)),
                    "completedLength": .string(String(completed)), "selected": "true",
                    "uris": uriObjects(url, started: status != .waiting),
                ]
            ],
        ]
        if let holder = entry.holder { object["peregrine.holder"] = .string(holder) }
        if case .failed(let reason) = task.state {
            object["errorCode"] = .string(DownloadStatus.errorCode(of: reason))
            object["errorMessage"] = .string(reason.description)
        } else if status == .complete {
            object["errorCode"] = "0"
            object["errorMessage"] = ""
        }
        return object
    }
}

/// The additions of one `system.multicall` on a fleet service, enqueued together when the
/// calls are done (``RPCDispatcher/addToFleet(_:options:fileName:mirrors:position:queue:)``).
final class FleetBatch: Sendable {
    /// The batch of the multicall the calling task runs, if any.
    @TaskLocal static var current: FleetBatch?

    private let pending = Locked<[StoredTask]>([])

    func append(_ task: StoredTask) { pending.withLock { $0.append(task) } }

    var tasks: [StoredTask] { pending.withLock { $0 } }
}
