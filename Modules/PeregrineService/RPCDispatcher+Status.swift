import Peregrine

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension RPCDispatcher {
    /// The aria2 status of a task of the manager.
    func status(of url: String) -> DownloadStatus {
        guard let snapshot = manager.engine.task(url) else { return .removed }
        return status(of: snapshot)
    }

    func status(of snapshot: DownloadTaskSnapshot) -> DownloadStatus {
        status(of: snapshot.urlString, state: snapshot.state, isQueued: snapshot.isQueued)
    }

    /// The aria2 status of a task in `state`.
    func status(of url: String, state taskState: DownloadState, isQueued: Bool) -> DownloadStatus {
        let paused = state.withLock { state in state.table.gidByURL[url].map { state.paused.contains($0) } ?? false }
        return DownloadStatus(
            taskState, isQueued: isQueued, pausedByClient: paused, inTrash: manager.indexPath(ofTask: url) == nil)
    }

    /// The current download speed of a task, in bytes per second.
    func speed(of url: String) -> Int64 {
        let now = ContinuousClock.now
        return state.withLock { $0.meters[url]?.bytesPerSecond(at: now) } ?? 0
    }

    /// `tellStatus`'s object for a task, every key.
    func statusObject(gid: GID, url: String) -> JSONObject {
        guard let snapshot = manager.engine.task(url) else {
            return ["gid": .string(gid.description), "status": "removed"]
        }
        let status = status(of: snapshot)
        let record = snapshot.record
        let total = record.expectedLength ?? (status == .complete ? snapshot.receivedBytes : 0)
        let completed = status == .complete ? max(snapshot.receivedBytes, total) : snapshot.receivedBytes
        let speed = status == .active ? speed(of: url) : 0
        let pieceLength: Int64 = 1 << 20
        var object: JSONObject = [
            "gid": .string(gid.description),
            "status": .string(status.rawValue),
            "totalLength": .string(String(total)),
            "completedLength": .string(String(completed)),
            "uploadLength": "0",
            "downloadSpeed": .string(String(speed)),
            "uploadSpeed": "0",
            "connections": status == .active ? "1" : "0",
            "numPieces": .string(String((total + pieceLength - 1) / pieceLength)),
            "pieceLength": .string(String(pieceLength)),
            "dir": .string(
                record.subdirectory.map { manager.downloadDirectory + "/" + $0 } ?? manager.downloadDirectory),
            "files": .array([fileObject(snapshot, status: status)]),
        ]
        if total > 0 {
            let have: [Range<Int64>] =
                status == .complete
                ? [0..<total]
                : record.resumeRecord.flatMap { $0.completedRanges.isEmpty ? nil : $0.completedRanges }
                    ?? [0..<min(completed, total)]
            object["bitfield"] = .string(Self.bitfield(total: total, pieceLength: pieceLength, have: have))
        }
        if case .failed(let reason) = snapshot.state {
            object["errorCode"] = .string(DownloadStatus.errorCode(of: reason))
            object["errorMessage"] = .string(reason.description)
        } else if status == .complete {
            object["errorCode"] = "0"
            object["errorMessage"] = ""
        }
        return object
    }

    /// A task's one file, as `getFiles` and `tellStatus` show it.
    func fileObject(_ snapshot: DownloadTaskSnapshot, status: DownloadStatus) -> JSONValue {
        let url = snapshot.urlString
        let record = snapshot.record
        let path: String =
            manager.filePath(ofTask: url)
            ?? (record.fileName ?? record.preferredFileName.map(record.inSubdirectory)).map {
                manager.downloadDirectory + "/" + $0
            } ?? ""
        let total = record.expectedLength ?? (status == .complete ? snapshot.receivedBytes : 0)
        let completed = status == .complete ? max(snapshot.receivedBytes, total) : snapshot.receivedBytes
        return [
            "index": "1",
            "path": .string(path),
            "length": .string(String(total)),
            "completedLength": .string(String(completed)),
            "selected": "true",
            "uris": uriObjects(url, started: snapshot.receivedBytes > 0 || status == .active || status == .complete),
        ]
    }

    /// The URIs of a download: its own, then its mirrors, less those the engine dropped for it
    /// (aria2 too takes a failed URI off the list); "used" once the download started.
    func uriObjects(_ url: String, started: Bool) -> JSONValue {
        let task = manager.engine.task(url)
        var mirrors = task?.record.mirrors ?? []
        if mirrors.isEmpty {
            // Tasks added before the engine kept mirrors: the option the service kept.
            mirrors = state.withLock { state in
                guard let gid = state.table.gidByURL[url], let text = state.options[gid]?.values["peregrine.mirrors"]
                else { return [] }
                return text.split(separator: "\n").map(String.init)
            }
        }
        let dropped = task?.droppedURLs ?? [:]
        var uris: [JSONValue] = []
        for uri in [url] + mirrors where dropped[uri] == nil {
            uris.append(["uri": .string(uri), "status": started ? "used" : "waiting"])
        }
        return .array(uris)
    }

    /// Keeps only the keys asked for (all when none).
    static func filter(_ object: JSONObject, keys: [String]?) -> JSONValue {
        guard let keys, !keys.isEmpty else { return .object(object) }
        let wanted = Set(keys)
        return .object(object.filter { wanted.contains($0.key) })
    }

    /// The status object of a GID parameter: a task's, or a removed download's.
    func statusObject(_ text: String) throws(RPCError) -> JSONObject {
        switch try target(text) {
        case .task(let gid, let url):
            if let queue = configuration.fleetQueue {
                // The queue is the truth for a task held elsewhere, or changed by another
                // service since this one ran it (paused, retried).
                let entry = try Self.fleetCall { () throws(StoreError) in try queue.entries([url])[url] }
                guard let entry else {
                    // Removed from the queue, through any service: this copy goes at its
                    // holder's next renewal.
                    var object = statusObject(gid: gid, url: url)
                    object["status"] = "removed"
                    return object
                }
                if !isCurrentHere(entry, queue: queue) { return fleetStatusObject(gid: gid, entry: entry) }
                return localStatusObject(gid: gid, entry: entry)
            }
            return statusObject(gid: gid, url: url)
        case .removed(let gid): return state.withLock { $0.removed[gid]?.status } ?? [:]
        }
    }

    /// `aria2.tellStatus(gid[, keys])`.
    func tellStatus(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let keys = try params.strings(1)
        return Self.filter(try statusObject(text), keys: keys)
    }

    /// `aria2.getUris(gid)`.
    func getUris(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let object = try statusObject(try params.string(0))
        guard case .array(let files) = object["files"], case .object(let file) = files.first, let uris = file["uris"]
        else { return [] }
        return uris
    }

    /// `aria2.getFiles(gid)`.
    func getFiles(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let object = try statusObject(try params.string(0))
        return object["files"] ?? []
    }

    /// The downloads by status: the kept index, or a pass over every task after a change.
    func statusIndex() -> StatusIndex {
        statusIndexCache.index {
            var index = StatusIndex()
            for task in manager.engine.states() {
                switch status(of: task.urlString, state: task.state, isQueued: task.isQueued) {
                case .active: index.active.append(task.urlString)
                case .waiting, .paused: index.waiting.append(task.urlString)
                case .complete, .error: index.stopped += 1
                case .removed: break
                }
            }
            return index
        }
    }

    /// `aria2.tellActive([keys])`.
    func tellActive(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let keys = try params.strings(0)
        if let queue = configuration.fleetQueue { return try fleetTellActive(keys: keys, queue: queue) }
        var answer: [JSONValue] = []
        for url in statusIndex().active {
            // The status is read again: the index may be a moment old.
            guard let snapshot = manager.engine.task(url), status(of: snapshot) == .active else { continue }
            answer.append(Self.filter(statusObject(gid: gid(of: url), url: url), keys: keys))
        }
        return .array(answer)
    }

    /// The waiting and paused downloads, in queue order, read afresh from every task.
    func waitingURLs() -> [String] {
        manager.engine.states().filter {
            let status = status(of: $0.urlString, state: $0.state, isQueued: $0.isQueued)
            return status == .waiting || status == .paused
        }.map(\.urlString)
    }

    /// `aria2.tellWaiting(offset, num[, keys])`: only the page's status objects are built.
    func tellWaiting(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (offset, num, keys) = try pageParameters(params)
        if let queue = configuration.fleetQueue {
            return try fleetTellWaiting(offset: offset, num: num, keys: keys, queue: queue)
        }
        let page = Pagination.page(statusIndex().waiting, offset: offset, num: num)
        return .array(page.map { Self.filter(statusObject(gid: gid(of: $0), url: $0), keys: keys) })
    }

    /// `aria2.tellStopped(offset, num[, keys])`: complete, failed and removed downloads, in the
    /// order they stopped (those that stopped before the service started first, by time). The
    /// trash is not listed (see `peregrine.listTrash`).
    func tellStopped(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (offset, num, keys) = try pageParameters(params)
        if let queue = configuration.fleetQueue {
            return try fleetTellStopped(offset: offset, num: num, keys: keys, queue: queue)
        }
        // Ordered first, materialised only for the page: a long list costs no status objects.
        let page = Pagination.page(stoppedEntries(), offset: offset, num: num)
        return .array(
            page.map { entry in
                switch entry {
                case .task(let gid, let url): Self.filter(statusObject(gid: gid, url: url), keys: keys)
                case .removed(let gid): Self.filter(state.withLock { $0.removed[gid]?.status } ?? [:], keys: keys)
                }
            })
    }

    /// Every stopped download, in stop order.
    func stoppedEntries() -> [Target] {
        var entries: [(order: UInt64, date: Date, gid: GID, target: Target)] = []
        // A task in the trash reads as removed in tellStatus but is listed by peregrine.listTrash,
        // not here: purging results never empties the trash.
        for task in manager.engine.states() {
            let status = status(of: task.urlString, state: task.state, isQueued: task.isQueued)
            // Only a stopped task's record is read (for its dates).
            guard status == .complete || status == .error, let snapshot = manager.engine.task(task.urlString) else {
                continue
            }
            let gid = gid(of: snapshot.urlString)
            let order = state.withLock { $0.stopOrder[gid] } ?? 0
            let date = snapshot.record.finishedAt ?? snapshot.record.addedAt
            entries.append((order, date, gid, .task(gid, snapshot.urlString)))
        }
        let removed = state.withLock { $0.removed.map { ($0.value.order, $0.key) } }
        for (order, gid) in removed { entries.append((order, .distantFuture, gid, .removed(gid))) }
        // The GID breaks ties (tasks finished in the same instant), so the order is stable.
        return entries.sorted { ($0.order, $0.date, $0.gid) < ($1.order, $1.date, $1.gid) }.map(\.target)
    }

    private func pageParameters(_ params: RPCParameters) throws(RPCError) -> (Int, Int, [String]?) {
        let offset = try params.integer(0)
        let num = try params.integer(1)
        guard num >= 0 else { throw RPCError("The parameter num must be a non-negative integer.") }
        return (offset, num, try params.strings(2))
    }

    /// `aria2.getGlobalStat`. On a fleet service, the figures are the whole fleet's:
    /// `numActive`, `numWaiting` and `numStopped` count the shared queue, and `downloadSpeed`
    /// adds to this service's the speeds the other holders recorded at their last renewals.
    func getGlobalStat() throws(RPCError) -> JSONValue {
        let index = statusIndex()
        var active = index.active.count
        var waiting = index.waiting.count
        var (stopped, forgotten) = state.withLock { (index.stopped + $0.removed.count, $0.forgottenResults) }
        if let queue = configuration.fleetQueue {
            let census = try Self.fleetCall { () throws(StoreError) in try queue.census() }
            (active, waiting, stopped) = (census.held, census.waiting, census.ended)
            forgotten = 0
        }
        var speed: Int64 = 0
        for url in index.active { speed += self.speed(of: url) }
        if let queue = configuration.fleetQueue {
            let held = try Self.fleetCall { () throws(StoreError) in
                try queue.page(.held, offset: 0, count: Self.fleetListLimit)
            }
            for entry in held where entry.holder != queue.owner { speed += Self.holderSpeed(entry) ?? 0 }
        }
        return [
            "downloadSpeed": .string(String(speed)), "uploadSpeed": "0", "numActive": .string(String(active)),
            "numWaiting": .string(String(waiting)), "numStopped": .string(String(stopped)),
            // As aria2: results purged or removed still count.
            "numStoppedTotal": .string(String(stopped + forgotten)),
        ]
    }
}
