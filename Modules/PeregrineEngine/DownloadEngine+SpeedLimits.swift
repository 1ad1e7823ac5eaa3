import PeregrineTransport

extension DownloadEngine {
    /// The speed limit shared by every transfer of the engine (a manager's global limit, aria2's
    /// `max-overall-download-limit`); nil for none. A change applies to running transfers within
    /// `BandwidthLimiter.recheckInterval` (100 ms). Not saved: the owner of the engine sets it at start
    /// (``Configuration/overallSpeedLimit``).
    public var overallSpeedLimit: SpeedLimit? {
        get { overallLimiter.limit }
        set { overallLimiter.limit = newValue }
    }

    /// Sets a task's own speed limit (nil for none), shared by all of its connections; the
    /// task's list's and the engine's limits apply as well. The limit is saved with the task's
    /// record (like ``setMaxConnections(_:forTask:)``) and applies to a running transfer within
    /// `BandwidthLimiter.recheckInterval` (100 ms), without restarting it.
    ///
    /// - Returns: whether the task exists.
    @discardableResult
    public func setSpeedLimit(_ limit: SpeedLimit?, forTask urlString: String) -> Bool {
        perform { state, effects in
            guard let entry = state.tasks[urlString] else { return false }
            guard entry.record.speedLimit != limit else { return true }
            entry.record.speedLimit = limit
            entry.limiter?.limit = limit
            effects.markDirty(urlString)
            return true
        }
    }

    /// A task's own speed limit; nil for none or an unknown task.
    public func speedLimit(ofTask urlString: String) -> SpeedLimit? {
        state.withLock { $0.tasks[urlString]?.record.speedLimit }
    }

    /// Sets the speed limit shared by all transfers of one list (nil for none); it applies to
    /// running transfers within `BandwidthLimiter.recheckInterval` (100 ms). Not saved: a list's owner
    /// (the facade, an application) sets it again after a restart.
    public func setSpeedLimit(_ limit: SpeedLimit?, forList list: DownloadListKey) {
        state.withLock { state in
            if let limiter = state.listLimiters[list] {
                limiter.limit = limit
            } else if limit != nil {
                state.listLimiters[list] = BandwidthLimiter(limit, clock: clock.now)
            }
        }
    }

    /// A list's speed limit; nil for none.
    public func speedLimit(ofList list: DownloadListKey) -> SpeedLimit? {
        state.withLock { $0.listLimiters[list]?.limit }
    }

    /// The limiters a task's next transfer is under: its own, its list's and the engine's. The
    /// task's and the list's are made on first use, so that a limit set later reaches a transfer
    /// already running.
    func bandwidthLimiters(for entry: TaskEntry, _ state: inout EngineState) -> [BandwidthLimiter] {
        let own = entry.limiter ?? BandwidthLimiter(entry.record.speedLimit, clock: clock.now)
        entry.limiter = own
        let list = entry.record.list
        let shared = state.listLimiters[list] ?? BandwidthLimiter(nil, clock: clock.now)
        state.listLimiters[list] = shared
        return [own, shared, overallLimiter]
    }
}
