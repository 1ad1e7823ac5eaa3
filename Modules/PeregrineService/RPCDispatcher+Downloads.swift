import Peregrine

extension RPCDispatcher {
    /// `aria2.addUri(uris[, options[, position]])`: adds one download of the first URI, the
    /// others its mirrors (pieces are spread over them, as aria2 does), and returns its GID.
    ///
    /// Peregrine keys tasks by URL: adding a URL the manager already has (also spelt
    /// differently, `HTTP://Host:80/a`) returns that download's GID; a failed one starts again,
    /// any other is left as it is.
    func addUri(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        guard let uris = try params.strings(0) else { throw RPCError.missing(at: 0) }
        guard let url = uris.first else { throw RPCError("URI is not provided.") }
        guard uris.count <= configuration.limits.maxURIsPerDownload else {
            throw RPCError("At most \(configuration.limits.maxURIsPerDownload) URIs per download.")
        }
        var options = try DownloadOptions.parse(params[1], allowed: DownloadOptions.perDownload, position: 1)
        // A folder inside the root (made when the file is placed), kept resolved for getOption.
        var subdirectory: String?
        if let dir = options.values["dir"] {
            do throws(PathConfinementError) {
                subdirectory = try confinement.subdirectory(dir)
                options.values["dir"] = subdirectory.map { confinement.root + "/" + $0 } ?? confinement.root
            } catch {
                throw RPCError(error.description)
            }
        }
        var fileName: String?
        if let out = options.values["out"] {
            do throws(PathConfinementError) {
                fileName = try confinement.fileName(out, in: subdirectory)
            } catch {
                throw RPCError(error.description)
            }
        }
        let position: Int? = params.count > 2 ? try params.integer(2) : nil
        var wanted: GID?
        if let text = options.values.removeValue(forKey: "gid") {
            // aria2: 16 hex digits, unused by any download (a removed one's result counts).
            guard text.utf8.count == 16,
                text.utf8.allSatisfy({
                    UInt8(ascii: "0")...UInt8(ascii: "9") ~= $0 || UInt8(ascii: "a")...UInt8(ascii: "f") ~= $0 | 0x20
                }),
                let gid = GID(hex: text.lowercased())
            else {
                throw RPCError.badOption("gid", "must be 16 hexadecimal digits")
            }
            let taken = state.withLock { $0.table.urlByGID[gid] != nil || $0.removed[gid] != nil }
            guard !taken else { throw RPCError("GID \(gid) is not unique.") }
            wanted = gid
        }

        // In a fleet the queue decides, also for a URL this service holds or held.
        if let queue = configuration.fleetQueue {
            // Every service of a fleet names a task by its URL (`GID.fleet`).
            guard wanted == nil else { throw RPCError("The option gid is not carried by the fleet's shared queue.") }
            return try addToFleet(
                url, options: options, fileName: fileName, subdirectory: subdirectory, mirrors: Array(uris.dropFirst()),
                position: position, queue: queue)
        }
        if let existing = manager.engine.task(url)?.urlString {
            return .string(readd(existing).description)
        }
        // The GID is bound to the URL (the key the engine gives the task) before the task
        // exists, so that its first events already find it.
        let paused = options.values["pause"] == "true"
        let (gid, metaOptions) = state.withLock { state -> (GID, PropertyListValue?) in
            let (gid, isNew) = state.table.gid(for: url, preferring: wanted, using: &state.generator)
            // Bound already: another addUri of this URL is adding it now.
            guard isNew else { return (gid, nil) }
            let shared = state.sharedOptions.share(options)
            state.options[gid] = shared.options
            if paused { state.paused.insert(gid) }
            return (gid, shared.meta)
        }
        guard let metaOptions else { return .string(gid.description) }
        // Before the transfer can start.
        applyRequestOptions(options, to: url)
        // GID, options and the paused mark recorded with the task: one write to the store.
        var meta: [String: PropertyListValue] = [MetaKey.gid: .string(gid.description)]
        if !options.values.isEmpty { meta[MetaKey.options] = metaOptions }
        if paused { meta[MetaKey.paused] = MetaKey.pausedMark }
        // aria2's clients know nothing of sections: in manual mode the download goes last.
        let addition = manager.downloadInAnyMode(
            [
                DownloadItem(
                    url, preferredFileName: fileName, checksum: options.values["checksum"],
                    maxConnections: connections(options, servers: uris.count), speedLimit: speedLimit(options),
                    mirrors: Array(uris.dropFirst()), subdirectory: subdirectory)
            ], metaInfo: [url: meta]
        ).addition
        guard let added = addition.added.first else {
            configuration.requestTable?.remove(task: url)
            state.withLock { state in
                state.table.remove(url: url)
                state.options[gid] = nil
                state.paused.remove(gid)
            }
            if let invalid = addition.invalid.first {
                throw RPCError("Invalid URI \(invalid.urlString): \(invalid.error)")
            }
            if let refused = addition.invalidChecksums.first {
                throw RPCError.badOption("checksum", "\(refused.error)")
            }
            if let duplicate = addition.duplicates.first {
                return .string(readd(duplicate.existingURLString).description)
            }
            throw RPCError("\(url) was not added")
        }
        // The service's manager adds tasks pending (downloadNewFileImmediately off): a paused one
        // stays so, never started, and its status is `paused` by the mark.
        if !paused, manager.engine.task(added)?.state == .pending, !manager.engine.isWaiting(added) {
            _ = try? manager.resumeTasks([added])
        }
        if let position { _ = try? move(gid: gid, url: added, position: position, how: "POS_SET") }
        return .string(gid.description)
    }

    /// A second `addUri` of a URL the manager has: a failed download starts again (where aria2
    /// would add a new copy); any other is left as it is. Returns its GID.
    private func readd(_ url: String) -> GID {
        let gid = gid(of: url)
        if status(of: url) == .error {
            state.withLock { _ = $0.stopOrder.removeValue(forKey: gid) }
            _ = try? manager.resumeTasks([url])
        }
        return gid
    }

    /// `aria2.pause(gid)` / `forcePause`: an active or waiting download becomes paused (its
    /// transfer stops with a resume record); it is not started again until unpaused.
    func pause(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let (gid, url) = try task(text)
        if let queue = configuration.fleetQueue {
            // In a fleet the queue pauses it, whoever holds it; here, at once.
            try fleetControl(.pause, gid: gid, url: url, queue: queue, doing: "paused")
            if manager.engine.task(url) != nil {
                setPausedByClient(true, gid: gid, url: url)
                _ = try? manager.stopTasks([url])
            }
            notify("aria2.onDownloadPause", gid: gid)
            return .string(gid.description)
        }
        let status = self.status(of: url)
        guard status == .active || status == .waiting else { throw RPCError("GID#\(gid) cannot be paused now") }
        pause(gid: gid, url: url)
        return .string(gid.description)
    }

    private func pause(gid: GID, url: String) {
        setPausedByClient(true, gid: gid, url: url)
        _ = try? manager.stopTasks([url])
        notify("aria2.onDownloadPause", gid: gid)
    }

    /// `aria2.pauseAll` / `forcePauseAll`.
    func pauseAll() -> JSONValue {
        for url in manager.engine.urlStrings() {
            let status = self.status(of: url)
            if status == .active || status == .waiting { pause(gid: gid(of: url), url: url) }
        }
        return "OK"
    }

    /// `aria2.unpause(gid)`: a paused download waits again (and starts when a slot is free).
    func unpause(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let (gid, url) = try task(text)
        if let queue = configuration.fleetQueue {
            // Waiting in the queue again, for whichever service claims it next.
            try fleetControl(.resume, gid: gid, url: url, queue: queue, doing: "unpaused")
            if manager.engine.task(url) != nil { setPausedByClient(false, gid: gid, url: url) }
            return .string(gid.description)
        }
        guard status(of: url) == .paused else { throw RPCError("GID#\(gid) cannot be unpaused now") }
        unpause(gid: gid, url: url)
        return .string(gid.description)
    }

    private func unpause(gid: GID, url: String) {
        setPausedByClient(false, gid: gid, url: url)
        _ = try? manager.resumeTasks([url])
    }

    /// `aria2.unpauseAll`.
    func unpauseAll() -> JSONValue {
        for url in manager.engine.urlStrings() where status(of: url) == .paused { unpause(gid: gid(of: url), url: url) }
        return "OK"
    }

    /// `aria2.remove(gid)` / `forceRemove`: an active, waiting or paused download is removed;
    /// its partial file goes with it (Peregrine cannot resume a task it no longer has). As in
    /// aria2 1.36, an active download's result stays in `tellStopped` as `removed` until purged
    /// (and `onDownloadStop` is sent), while a waiting or paused one is forgotten at once.
    func remove(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let (gid, url) = try task(text)
        if let queue = configuration.fleetQueue {
            // Out of the queue, whoever holds it; this service's copy goes as below.
            try fleetControl(.remove, gid: gid, url: url, queue: queue, doing: "removed")
            guard manager.engine.task(url) != nil else {
                state.withLock { state in
                    state.table.remove(url: url)
                    state.options[gid] = nil
                }
                return .string(gid.description)
            }
        }
        let status = self.status(of: url)
        guard status == .active || status == .waiting || status == .paused else {
            throw RPCError("Active Download not found for GID#\(gid)")
        }
        var frozen = self.statusObject(gid: gid, url: url)
        frozen["status"] = "removed"
        frozen["downloadSpeed"] = "0"
        frozen["connections"] = "0"
        try deleteForGood(url)
        state.withLock { state in
            state.table.remove(url: url)
            state.options[gid] = nil
            state.paused.remove(gid)
            state.meters[url] = nil
            if status == .active {
                state.removed[gid] = RemovedDownload(status: frozen, order: state.nextStop)
                state.nextStop += 1
            }
        }
        configuration.requestTable?.remove(task: url)
        if status == .active { notify("aria2.onDownloadStop", gid: gid) }
        return .string(gid.description)
    }

    /// Deletes a task and its temporary file for good (through the trash when it is open).
    func deleteForGood(_ url: String, keepFinishedFile: Bool = true) throws(RPCError) {
        do throws(DownloadManagerError) {
            if manager.indexPath(ofTask: url) != nil {
                try manager.deleteTasks([url], keepFinishedFile: keepFinishedFile)
            }
            if manager.engine.task(url) != nil { try manager.cleanupToDeleteTasks([url]) }
        } catch {
            throw Self.error(error)
        }
    }

    /// `aria2.removeDownloadResult(gid)`: forgets a complete, failed or removed download (a
    /// complete download's file stays).
    func removeDownloadResult(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        if let queue = configuration.fleetQueue, case .task(let gid, let url) = try target(text) {
            return try fleetRemoveDownloadResult(gid: gid, url: url, queue: queue)
        }
        switch try target(text) {
        case .removed(let gid):
            state.withLock { state in
                if state.removed.removeValue(forKey: gid) != nil { state.forgottenResults += 1 }
            }
        case .task(let gid, let url):
            guard status(of: url).isStopped else { throw RPCError("Could not remove download result of GID#\(gid)") }
            try forget(gid: gid, url: url)
            state.withLock { $0.forgottenResults += 1 }
        }
        return "OK"
    }

    /// `aria2.purgeDownloadResult`: forgets every complete, failed and removed download.
    func purgeDownloadResult() -> JSONValue {
        state.withLock { state in
            state.forgottenResults += state.removed.count
            state.removed = [:]
        }
        for url in manager.engine.urlStrings() {
            let status = status(of: url)
            guard status == .complete || status == .error, (try? forget(gid: gid(of: url), url: url)) != nil else {
                continue
            }
            state.withLock { $0.forgottenResults += 1 }
        }
        return "OK"
    }

    func forget(gid: GID, url: String) throws(RPCError) {
        try deleteForGood(url)
        state.withLock { state in
            state.table.remove(url: url)
            state.options[gid] = nil
            state.paused.remove(gid)
            state.stopOrder[gid] = nil
        }
        configuration.requestTable?.remove(task: url)
    }

    /// `aria2.changePosition(gid, pos, how)`: moves a waiting or paused download in the
    /// waiting queue (`POS_SET`, `POS_CUR`, `POS_END`); returns its new position.
    func changePosition(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let position = try params.integer(1)
        let how = try params.string(2)
        let (gid, url) = try task(text)
        return .integer(Int64(try move(gid: gid, url: url, position: position, how: how)))
    }

    /// Moves a download in the waiting queue; the engine's list order follows (the order its
    /// queue starts downloads in). A later sort of the list by the facade orders it anew.
    func move(gid: GID, url: String, position: Int, how: String) throws(RPCError) -> Int {
        var waiting = waitingURLs()
        guard let current = waiting.firstIndex(of: url) else {
            throw RPCError("GID#\(gid) not found in the waiting queue.")
        }
        let target: Int
        switch how {
        case "POS_SET": target = position
        case "POS_CUR": target = current + position
        case "POS_END": target = waiting.count - 1 + position
        default: throw RPCError("Illegal argument.")
        }
        waiting.remove(at: current)
        let index = min(max(0, target), waiting.count)
        waiting.insert(url, at: index)
        // Active and finished tasks keep their places before the queue.
        let queued = Set(waiting)
        let others = manager.engine.urlStrings().filter { !queued.contains($0) }
        manager.engine.setListOrder(others + waiting)
        return index
    }
}

extension RPCDispatcher {
    /// The connections a new download may use, as aria2 counts them: `split`, at most
    /// `max-connection-per-server` on each of its `servers` (its URI and its mirrors), each
    /// defaulting to the global option. Nil when the request names neither: the service's own
    /// count (`peregrine daemon --split`) applies.
    func connections(_ options: DownloadOptions, servers: Int = 1) -> Int? {
        guard options.values["split"] != nil || options.values["max-connection-per-server"] != nil else { return nil }
        let global = state.withLock { $0.global }
        let split = (options.values["split"] ?? global.values["split"]).flatMap { Int($0) } ?? 1
        let perServer =
            (options.values["max-connection-per-server"] ?? global.values["max-connection-per-server"])
            .flatMap { Int($0) } ?? 1
        return min(split, perServer * max(servers, 1))
    }
}
