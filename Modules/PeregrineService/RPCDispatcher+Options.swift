import Peregrine

extension RPCDispatcher {
    /// `aria2.getOption(gid)`: the download's options over the global defaults.
    func getOption(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let gid: GID
        switch try target(text) {
        case .task(let found, _): gid = found
        case .removed(let found): gid = found
        }
        let values = state.withLock { state in
            state.global.values.filter { DownloadOptions.perDownload.contains($0.key) }
                .merging(state.options[gid]?.values ?? [:]) { _, own in own }
        }
        var object = JSONObject(values.filter { !$0.key.hasPrefix("peregrine.") }.mapValues { .string($0) })
        object["dir"] = .string(values["dir"] ?? manager.downloadDirectory)
        if let header = values["header"] {
            object["header"] = .array(header.split(separator: "\n").map { .string(String($0)) })
        }
        return .object(object)
    }

    /// `aria2.changeOption(gid, options)`: `split`, `max-connection-per-server` and
    /// `max-download-limit` (see ``DownloadOptions``); a changed connection count applies to an
    /// active download at once (its transfer starts again from what it has, as aria2 restarts
    /// it), a changed speed limit too (the transfer goes on, slower or faster). Other names are ignored, as aria2 ignores those it cannot change, except a
    /// `dir` outside the root (refused).
    func changeOption(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let (gid, url) = try task(text)
        guard params[1] != nil else { throw RPCError.missing(at: 1) }
        // As aria2 does, options this method does not act on are ignored (AriaNg sends many);
        // a `dir` is still checked, so that no client believes it moved a download outside.
        if case .object(let members) = params[1], case .string(let dir) = members["dir"] {
            try checkDirectory(dir)
        }
        let changes = try DownloadOptions.parse(params[1], allowed: DownloadOptions.changeable, position: 1)
        let values = state.withLock { state in
            state.options[gid, default: DownloadOptions()].values.merge(changes.values) { _, new in new }
            return state.options[gid]!.values
        }
        applyRequestOptions(DownloadOptions(values), to: url)
        try? manager.updateMetaInfo([MetaKey.options: .dictionary(values.mapValues { .string($0) })], forTask: url)
        if changes.values["split"] != nil || changes.values["max-connection-per-server"] != nil {
            // An active download starts its transfer again with the new count, from what it has.
            let servers = 1 + (manager.engine.task(url)?.record.mirrors.count ?? 0)
            manager.engine.setMaxConnections(connections(DownloadOptions(values), servers: servers), forTask: url)
        }
        if changes.values["max-download-limit"] != nil {
            manager.setSpeedLimit(speedLimit(DownloadOptions(values)), forTask: url)
        }
        return "OK"
    }

    /// Refuses a `dir` other than the download root (see ``PathConfinement``).
    private func checkDirectory(_ dir: String) throws(RPCError) {
        do throws(PathConfinementError) {
            _ = try confinement.directory(dir)
        } catch {
            throw RPCError(error.description)
        }
    }

    /// `aria2.getGlobalOption`.
    func getGlobalOption() -> JSONValue {
        var object = JSONObject(state.withLock { $0.global.values.mapValues { JSONValue.string($0) } })
        object["dir"] = .string(manager.downloadDirectory)
        object["max-concurrent-downloads"] = .string(String(manager.maxDownloadCount))
        // The manager's own limit: saved, so it outlives a restart that forgot the option.
        object["max-overall-download-limit"] = .string(String(manager.overallSpeedLimit?.bytesPerSecond ?? 0))
        object["rpc-listen-port"] = .string(String(listeningPort.withLock { $0 } ?? configuration.port))
        object["rpc-listen-all"] = configuration.host == "127.0.0.1" ? "false" : "true"
        object["rpc-allow-origin-all"] = configuration.allowOriginAll ? "true" : "false"
        return .object(object)
    }

    /// `aria2.changeGlobalOption(options)`: `max-concurrent-downloads` (the manager's limit,
    /// saved), `max-overall-download-limit` and the defaults of new downloads' `split`,
    /// `max-connection-per-server`, `max-download-limit`. Other names are ignored, as in aria2,
    /// except a `dir` other than the download root (refused).
    func changeGlobalOption(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        guard params[0] != nil else { throw RPCError.missing(at: 0) }
        if case .object(let members) = params[0], case .string(let dir) = members["dir"] {
            try checkDirectory(dir)
        }
        var changes = try DownloadOptions.parse(params[0], allowed: DownloadOptions.global, position: 0)
        if let count = changes.values.removeValue(forKey: "max-concurrent-downloads").flatMap({ Int($0) }) {
            manager.maxDownloadCount = count
        }
        if let overall = changes.values["max-overall-download-limit"] {
            // Shared by every transfer of the manager, running ones included.
            manager.overallSpeedLimit = DownloadOptions.speedLimit(overall)
        }
        // The global max-download-limit applies to downloads added from now on, as in aria2.
        state.withLock { $0.global.values.merge(changes.values) { _, new in new } }
        return "OK"
    }
}
