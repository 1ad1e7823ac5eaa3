import Peregrine

extension RPCDispatcher {
    /// What the service does where a client asks which value an option has and none was given:
    /// aria2's default, except where the service works otherwise.
    /// (aria2's `user-agent` names aria2: the transport's own is reported only when set.)
    private var serviceDefaults: [String: String] {
        [
            "dir": manager.downloadDirectory,
            // A download always continues from the bytes it has.
            "continue": "true",
            // The manager's retries (BackoffRetryPolicy.standard: five after the first try) and
            // the transport's default connect timeout.
            "max-tries": "6",
            "connect-timeout": "30",
        ]
    }

    /// `aria2.getOption(gid)`: every option of a download, as aria2 reports them — its own
    /// values over the global ones over the defaults; `header` one string, a line each.
    /// Secrets (`http-passwd`) are never reported.
    func getOption(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let gid: GID
        switch try target(text) {
        case .task(let found, _): gid = found
        case .removed(let found): gid = found
        }
        let (own, global) = state.withLock { state in (state.options[gid]?.values ?? [:], state.global.values) }
        var values: [String: String] = [:]
        for option in Aria2Option.catalogue.values where option.perDownload {
            if let value = option.aria2Default { values[option.name] = value }
        }
        values["user-agent"] = nil
        values.merge(serviceDefaults) { _, service in service }
        values.merge(global.filter { DownloadOptions.changeable.contains($0.key) }) { _, global in global }
        values.merge(own) { _, own in own }
        return .object(Self.report(values.filter { !Aria2Option.addOnly.contains($0.key) }))
    }

    /// Option values in aria2's form: strings, secrets left out, `header` with a newline after
    /// each line.
    private static func report(_ values: [String: String]) -> JSONObject {
        var object = JSONObject(
            values.filter { !Aria2Option.isSecret($0.key) && !$0.key.hasPrefix("peregrine.") }.mapValues { .string($0) }
        )
        if let header = values["header"] {
            object["header"] = .string(header.isEmpty ? "" : header + "\n")
        }
        return object
    }

    /// `aria2.changeOption(gid, options)`: every option of a download is taken, checked as aria2
    /// checks it, kept and reported; a changed connection count applies to an active download at
    /// once (its transfer starts again from what it has, as aria2 restarts it), a changed speed
    /// limit too (the transfer goes on, slower or faster), the request options (headers,
    /// timeouts, credentials, proxy, retries) from its next transfer. `gid` and `pause` are
    /// ignored, as aria2 ignores them here; a `dir` outside the root is refused.
    func changeOption(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let (gid, url) = try task(text)
        guard params[1] != nil else { throw RPCError.missing(at: 1) }
        // As aria2 does, options this method does not act on are kept. A `dir` inside the root
        // moves where an unfinished download's file will be placed; a finished one stays.
        var changes = try DownloadOptions.parse(params[1], allowed: DownloadOptions.changeable, position: 1)
        if let dir = changes.values["dir"] {
            let subdirectory: String?
            do throws(PathConfinementError) {
                subdirectory = try confinement.subdirectory(dir)
                changes.values["dir"] = subdirectory.map { confinement.root + "/" + $0 } ?? confinement.root
            } catch {
                throw RPCError(error.description)
            }
            guard manager.engine.setSubdirectory(subdirectory, forTask: url) else {
                throw RPCError("The download is complete: its file stays in its directory.")
            }
        }
        let values = state.withLock { state in
            state.options[gid, default: DownloadOptions()].values.merge(changes.values) { _, new in new }
            return state.options[gid]!.values
        }
        applyRequestOptions(DownloadOptions(values), to: url)
        try? manager.updateMetaInfo([MetaKey.options: DownloadOptions(values).metaInfo], forTask: url)
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

    /// Refuses a global `dir` other than the download root (see ``PathConfinement``): the root
    /// is the service's; a folder inside it is given per download.
    private func checkDirectory(_ dir: String) throws(RPCError) {
        let subdirectory: String?
        do throws(PathConfinementError) {
            subdirectory = try confinement.subdirectory(dir)
        } catch {
            throw RPCError(error.description)
        }
        guard subdirectory == nil else {
            throw RPCError("'\(dir)': the download root is the service's; give dir to each download instead")
        }
    }

    /// `aria2.getGlobalOption`: every option, as aria2 reports them — the values changed by
    /// `changeGlobalOption` over what the service runs with over aria2's defaults.
    func getGlobalOption() -> JSONValue {
        var values: [String: String] = [:]
        for option in Aria2Option.catalogue.values {
            if let value = option.aria2Default { values[option.name] = value }
        }
        values["user-agent"] = nil
        values.merge(serviceDefaults) { _, service in service }
        values.merge(state.withLock { $0.global.values }) { _, global in global }
        values["max-concurrent-downloads"] = String(manager.maxDownloadCount)
        // The manager's own limit: saved, so it outlives a restart that forgot the option.
        values["max-overall-download-limit"] = String(manager.overallSpeedLimit?.bytesPerSecond ?? 0)
        values["rpc-listen-port"] = String(listeningPort.withLock { $0 } ?? configuration.port)
        values["rpc-listen-all"] = configuration.host == "127.0.0.1" ? "false" : "true"
        values["rpc-allow-origin-all"] = configuration.allowOriginAll ? "true" : "false"
        values["enable-rpc"] = "true"
        return .object(Self.report(values.filter { !Aria2Option.addOnly.contains($0.key) }))
    }

    /// `aria2.changeGlobalOption(options)`: every aria2 option is taken and checked as aria2
    /// checks it. `max-concurrent-downloads` (the manager's limit, saved) and
    /// `max-overall-download-limit` apply at once; the options of a download become the defaults
    /// of downloads added from now on (as in aria2); the others are kept and reported, and what
    /// a running service cannot change (its port, say) stays as it is, as in aria2. A `dir`
    /// other than the download root is refused.
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
        for fixed in Self.fixedGlobalOptions { changes.values[fixed] = nil }
        state.withLock { $0.global.values.merge(changes.values) { _, new in new } }
        return "OK"
    }

    /// Applies aria2 global options as `aria2.changeGlobalOption` does, with its checks — a
    /// program's configuration file (`peregrined --conf-path`) gives them so.
    ///
    /// - Throws: aria2's error for the first option it would refuse; none is applied then.
    public func applyGlobalOptions(_ options: [String: String]) throws(RPCError) {
        guard !options.isEmpty else { return }
        let object = JSONObject(options.map { ($0.key, JSONValue.string($0.value)) })
        _ = try changeGlobalOption(RPCParameters(values: [.object(object)]))
    }

    /// Checks aria2 global options as `aria2.changeGlobalOption` checks them, without a service:
    /// a program refuses a bad configuration file before it opens anything.
    ///
    /// - Throws: aria2's error for the first option it would refuse.
    public static func checkGlobalOptions(_ options: [String: String]) throws(RPCError) {
        let object = JSONObject(options.map { ($0.key, JSONValue.string($0.value)) })
        _ = try DownloadOptions.parse(.object(object), allowed: DownloadOptions.global, position: 0)
    }

    /// Whether aria2 has an option of this name (its catalogue, which the service takes whole).
    public static func isAria2Option(_ name: String) -> Bool { Aria2Option.catalogue[name] != nil }

    /// Global options a running service keeps as it started (its listening, its directory,
    /// `gid` and `pause`, which name one download), whatever `changeGlobalOption` says.
    private static let fixedGlobalOptions: [String] = [
        "rpc-listen-port", "rpc-listen-all", "rpc-allow-origin-all", "rpc-secret", "enable-rpc", "dir", "gid", "pause",
    ]
}
