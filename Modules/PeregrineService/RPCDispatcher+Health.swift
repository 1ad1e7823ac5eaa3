import Peregrine

extension RPCDispatcher {
    /// The text of `/metrics`: the counters as they are, the gauges of downloads by status and
    /// their speed as `aria2.getGlobalStat` answers now (a fleet service's, the queue's census;
    /// its own when the queue is unreachable), and the WebSocket clients connected.
    public func metricsText() async -> String {
        let stat: JSONValue
        do throws(RPCError) {
            stat = try await dispatchOnItsThread("aria2.getGlobalStat", RPCParameters(values: []))
        } catch {
            stat = localGlobalStat(stale: true)
        }
        func number(_ key: String) -> Int64 {
            guard case .object(let object) = stat, let text = object[key]?.stringValue else { return 0 }
            return Int64(text) ?? 0
        }
        return metrics.text(
            active: Int(number("numActive")), waiting: Int(number("numWaiting")), stopped: Int(number("numStopped")),
            speed: number("downloadSpeed"), webSocketClients: hub.subscriberCount,
            droppedNotifications: hub.droppedNotifications)
    }

    /// Whether the service can do its work (`/readyz`): its store takes writes (after an error,
    /// a save now must succeed) and, in a fleet, the shared queue answers. Nil when ready, else
    /// why not.
    public func unreadiness() async -> String? {
        if isDraining { return "draining: the service is about to stop" }
        if configuration.fleetQueue != nil {
            // A read of the queue, on the threads for the database's calls and within their
            // bound; unlike getGlobalStat it has no local answer to fall back on.
            do throws(RPCError) {
                _ = try await dispatchOnItsThread(
                    "aria2.tellWaiting", RPCParameters(values: [.integer(0), .integer(1)]))
            } catch {
                return error.message
            }
        }
        guard manager.lastStoreError != nil else { return nil }
        do throws(DownloadManagerError) {
            try manager.saveData()
            return nil
        } catch {
            return "the store does not take writes: \(error)"
        }
    }

    /// Begins a drain before a stop: no download starts any more (those added meanwhile wait,
    /// and are kept), the running ones go on to their end, and `/readyz` answers 503, so that a
    /// load balancer sends new work elsewhere. A fleet service's worker drains too (the daemon
    /// calls its `drain()`).
    public func beginDrain() {
        let first = draining.withLock { draining in
            defer { draining = true }
            return !draining
        }
        guard first else { return }
        manager.engine.holdsWaitingTasks = true
        logger.notice("draining: no download starts any more; the running ones go on")
    }

    /// Whether ``beginDrain()`` was called.
    public var isDraining: Bool { draining.withLock { $0 } }
}
