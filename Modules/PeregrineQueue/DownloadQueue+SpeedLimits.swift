extension DownloadQueueing {
    /// The speed limit shared by every transfer of the manager (aria2's
    /// `max-overall-download-limit`); nil for none. A change reaches running transfers within
    /// `BandwidthLimiter.recheckInterval` (100 ms). Saved: a value set here (nil included)
    /// wins over the engine configuration's `overallSpeedLimit` when the store is loaded again, as
    /// ``maxDownloadCount`` does; the configuration's value alone is not saved.
    public var overallSpeedLimit: SpeedLimit? {
        get { engine.overallSpeedLimit }
        set {
            core.coordinator.enter()
            defer { core.coordinator.leave() }
            engine.overallSpeedLimit = newValue
            core.state.withLock { $0.overallSpeedLimit = .some(newValue) }
            core.recordConfiguration()
        }
    }

    /// Sets a task's own speed limit (nil for none), shared by all its connections, under the
    /// list's and the manager's limits. Saved with the task (as `DownloadItem.speedLimit` is
    /// when the task is added); a running download keeps its connection and slows down or
    /// speeds up within 100 ms.
    ///
    /// - Returns: whether the task exists.
    @discardableResult
    public func setSpeedLimit(_ limit: SpeedLimit?, forTask urlString: String) -> Bool {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return engine.setSpeedLimit(limit, forTask: urlString)
    }

    /// A task's own speed limit; nil for none or an unknown task.
    public func speedLimit(ofTask urlString: String) -> SpeedLimit? { engine.speedLimit(ofTask: urlString) }

    /// Sets the speed limit shared by all transfers of one list (nil for none); running
    /// transfers follow within 100 ms. Saved with the manager's options.
    public func setSpeedLimit(_ limit: SpeedLimit?, forList list: DownloadListKey) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        engine.setSpeedLimit(limit, forList: list)
        core.state.withLock { $0.listSpeedLimits[list] = limit }
        core.recordConfiguration()
    }

    /// A list's speed limit; nil for none.
    public func speedLimit(ofList list: DownloadListKey) -> SpeedLimit? { engine.speedLimit(ofList: list) }
}
