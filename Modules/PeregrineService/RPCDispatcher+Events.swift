import Peregrine

extension RPCDispatcher {
    /// Turns the manager's events into aria2's notifications and speed samples, until the
    /// sequence ends or the task is cancelled.
    func followEvents(_ events: AsyncStream<DownloadManagerEvent>) async {
        // While this runs, every change reaches the status index through an event.
        statusIndexCache.setFollowing(true)
        defer { statusIndexCache.setFollowing(false) }
        for await event in events {
            // Before the notification goes out: a client that got it reads the new state.
            if case .task(.progress) = event {} else { statusIndexCache.invalidate() }
            guard case .task(let taskEvent) = event else { continue }
            metrics.record(taskEvent)
            switch taskEvent {
            case .started(let url, let offset):
                state.withLock { $0.meters[url] = SpeedMeter(bytes: offset, at: .now) }
                if let gid = eventGID(url) { notify("aria2.onDownloadStart", gid: gid) }
            case .progress(let url, let received, _):
                state.withLock { state in
                    state.meters[url, default: SpeedMeter(bytes: received, at: .now)].record(bytes: received, at: .now)
                }
            case .finished(let url, let file):
                let gid = stopped(url)
                logger.info(
                    "download complete",
                    metadata: [
                        "gid": "\(gid?.description ?? "-")", "url": "\(DownloadURL.loggable(url))",
                        "file": "\(file.path)",
                    ])
                if let gid { notify("aria2.onDownloadComplete", gid: gid) }
            case .failed(let url, let reason):
                let gid = stopped(url)
                logger.notice(
                    "download failed",
                    metadata: [
                        "gid": "\(gid?.description ?? "-")", "url": "\(DownloadURL.loggable(url))",
                        "code": "\(DownloadStatus.errorCode(of: reason))", "reason": "\(reason.message)",
                    ])
                if let gid { notify("aria2.onDownloadError", gid: gid) }
            default:
                break
            }
        }
    }

    /// The GID of the task of an event; nil when the task is gone already (removed since).
    private func eventGID(_ url: String) -> GID? {
        if let gid = state.withLock({ $0.table.gidByURL[url] }) { return gid }
        return manager.engine.task(url) == nil ? nil : gid(of: url)
    }

    /// Records that a download stopped now (for `tellStopped`'s order); returns its GID.
    private func stopped(_ url: String) -> GID? {
        guard let gid = eventGID(url) else { return nil }
        state.withLock { state in
            state.meters[url] = nil
            state.stopOrder[gid] = state.nextStop
            state.nextStop += 1
        }
        return gid
    }
}
