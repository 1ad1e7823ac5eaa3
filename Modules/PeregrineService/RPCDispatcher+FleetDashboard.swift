import Peregrine
import PeregrineCore

/// The dashboard of a fleet service (``RPCServiceConfiguration/fleetQueue``): the page shows the
/// fleet's shared queue — every task, whichever service added or holds it — instead of this
/// service's own lists, and its actions (pause, resume, remove, retry) act on the queue.
extension RPCDispatcher {
    /// The fields of a row of a fleet service's `peregrine.listView`: ``rowFields`` and the
    /// service holding the task (`""` when none does).
    static let fleetRowFields: [JSONValue] = rowFields + ["holder"]

    /// The dashboard's methods that a fleet service refuses: the shared queue has one order
    /// (the order of addition), no sections and no trash, and a task's file is on whichever
    /// service downloaded it.
    static let fleetRefusedMethods = methodNames(with: .fleetRefused)

    /// The refusal of a method of ``fleetRefusedMethods``.
    static func fleetRefusal(_ method: String) -> RPCError {
        RPCError(
            "\(method) is not available on a fleet service: the shared queue keeps one order and has no"
                + " sections or trash (pause, unpause and remove work on any of its tasks).")
    }

    /// `peregrine.listView` of a fleet service: the shared queue as one section in the order
    /// the tasks were added, with ``fleetRowFields`` — the tasks this service holds as it runs
    /// them (with their speed), the others as the queue last recorded them. `fleet` is true;
    /// `queueTotal` counts every task of the queue, of which at most ``fleetListLimit`` are
    /// listed (`count`).
    func fleetListView(rows limit: Int?, queue: any ClaimingTaskQueue) throws(RPCError) -> JSONValue {
        let census = try Self.fleetCall { () throws(StoreError) in try queue.census() }
        let revision = fleetRevision(census)
        let listed = min(census.total, Self.fleetListLimit)
        let entries = try Self.fleetCall { () throws(StoreError) in
            try queue.page(.all, offset: 0, count: min(limit ?? listed, listed))
        }
        let count = max(listed, entries.count)
        return [
            "list": "", "revision": .integer(revision), "complete": .bool(entries.count >= count), "fleet": true,
            "queueTotal": .integer(Int64(max(census.total, entries.count))),
            "sortType": "addTime", "sortOrder": "ascending",
            "sectioning": ["addTime": false, "fileSize": false, "fileNameIndex": false],
            "fields": .array(Self.fleetRowFields),
            "sections": [
                [
                    "title": "", "count": .integer(Int64(count)),
                    "downloads": .array(entries.map { .array(fleetRow($0, queue: queue)) }),
                ]
            ],
        ]
    }

    /// `peregrine.listRevision` of a fleet service: changes when tasks were added to or removed
    /// from the shared queue, by any service (its count or its newest addition moved). Changes
    /// of state come to the page as notifications and through `tellActive`.
    func fleetListRevision(queue: any ClaimingTaskQueue) throws(RPCError) -> JSONValue {
        let census = try Self.fleetCall { () throws(StoreError) in try queue.census() }
        return .integer(fleetRevision(census))
    }

    /// The list revision, counted up when the queue's shape differs from the one last seen.
    private func fleetRevision(_ census: QueueCensus) -> Int64 {
        let shape = FleetShape(total: census.total, newestAddition: census.newestAddition)
        let changed = state.withLock { state in
            defer { state.fleetShape = shape }
            return state.fleetShape != nil && state.fleetShape != shape
        }
        if changed { listRevision.bump() }
        return listRevision.current
    }

    /// A row of the fleet's list, in the order of ``fleetRowFields``.
    private func fleetRow(_ entry: QueuedTask, queue: any ClaimingTaskQueue) -> [JSONValue] {
        let task = entry.task
        let url = task.urlString
        let known = state.withLock { $0.table.gidByURL[url] }
        let gid = JSONValue.string((known ?? GID.fleet(url)).description)
        let name = task.displayName ?? task.fileName ?? task.preferredFileName ?? Self.nameInURL(url)
        let kind = JSONValue.string(
            (task.kind ?? FileTypeClassifier.standard.fileType(ofFileNamed: name, mimeType: task.mimeType)).rawValue)
        let holder = JSONValue.string(entry.holder ?? "")
        if isCurrentHere(entry, queue: queue), let snapshot = manager.engine.task(url) {
            // As this service runs (or ran) it.
            let status = status(of: snapshot)
            let total = snapshot.record.expectedLength ?? 0
            let done = status == .complete ? max(snapshot.receivedBytes, total) : snapshot.receivedBytes
            return [
                gid, .string(name), .string(status.rawValue), .integer(max(0, total)), .integer(done), kind,
                .integer(status == .active ? speed(of: url) : 0), holder,
            ]
        }
        let progress = Self.fleetProgress(task)
        return [
            gid, .string(name), .string(progress.status.rawValue), .integer(progress.total),
            .integer(progress.completed), kind, .integer(Self.holderSpeed(entry) ?? 0), holder,
        ]
    }

    /// The aria2 status, total and completed length of a task as the queue records it.
    static func fleetProgress(_ task: StoredTask) -> (status: DownloadStatus, total: Int64, completed: Int64) {
        let status: DownloadStatus =
            switch task.state {
            case .pending: .waiting
            case .downloading: .active
            case .finished: .complete
            case .failed: .error
            case .stopped, .paused: .paused
            case .notInList: .removed
            }
        let total = max(0, task.expectedLength ?? (status == .complete ? task.receivedLength : 0))
        let completed = status == .complete ? max(task.receivedLength, total) : task.receivedLength
        return (status, total, completed)
    }

    /// The download speed the holder of a task recorded at its last renewal
    /// (``QueueMetaKey/speed``), while its lease runs; nil otherwise.
    static func holderSpeed(_ entry: QueuedTask) -> Int64? {
        guard entry.holder != nil, entry.task.state == .downloading,
            case .integer(let speed) = entry.task.metaInfo[QueueMetaKey.speed]
        else { return nil }
        return max(0, speed)
    }

    /// The last component of a URL's path (without its query), or the URL when it has none.
    static func nameInURL(_ url: String) -> String {
        var path = url.prefix { $0 != "?" && $0 != "#" }
        while path.last == "/" { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/"), path.index(after: slash) < path.endIndex else { return url }
        return String(path[path.index(after: slash)...])
    }

    /// `peregrine.restart(gid)` of a fleet service: a failed or stopped task of the queue waits
    /// again, for whichever service claims it next (it resumes where its partial file can be
    /// reached); an error for a task in any other state.
    func fleetRetry(gid: GID, url: String, queue: any ClaimingTaskQueue) throws(RPCError) -> JSONValue {
        try fleetControl(.retry, gid: gid, url: url, queue: queue, doing: "retried")
        if manager.engine.task(url) != nil { setPausedByClient(false, gid: gid, url: url) }
        return .string(gid.description)
    }

    /// `aria2.pauseAll` of a fleet service: every waiting and held task of the queue is paused,
    /// whoever holds it (its holder stops it at its next renewal; this service at once).
    func fleetPauseAll(queue: any ClaimingTaskQueue) throws(RPCError) -> JSONValue {
        let changed = try Self.fleetCall { () throws(StoreError) in try queue.controlAll(.pause) }
        for url in changed.sorted() {
            let gid = state.withLock { $0.table.gidByURL[url] } ?? GID.fleet(url)
            if manager.engine.task(url) != nil {
                setPausedByClient(true, gid: gid, url: url)
                _ = try? manager.stopTasks([url])
            }
            notify("aria2.onDownloadPause", gid: gid)
        }
        return "OK"
    }

    /// `aria2.unpauseAll` of a fleet service: every paused task of the queue waits again.
    func fleetUnpauseAll(queue: any ClaimingTaskQueue) throws(RPCError) -> JSONValue {
        let changed = try Self.fleetCall { () throws(StoreError) in try queue.controlAll(.resume) }
        for url in changed where manager.engine.task(url) != nil {
            let gid = state.withLock { $0.table.gidByURL[url] } ?? GID.fleet(url)
            setPausedByClient(false, gid: gid, url: url)
        }
        return "OK"
    }
}

/// What a fleet service's list revision compares: the queue's size and newest addition.
struct FleetShape: Sendable, Hashable {
    var total: Int
    var newestAddition: Int64
}
