import Dispatch
import PeregrineCore

extension DownloadEngine {
    /// Called with each activity sample while tracking (SDE's `downloadActivityHandler`).
    public var downloadActivityHandler: (@Sendable (ActivityReport) -> Void)? {
        get { state.withLock { $0.activityHandler } }
        set { state.withLock { $0.activityHandler = newValue } }
    }

    /// Called once when tracking ends because nothing downloads any more — also when every
    /// download was paused — but not after ``stopTrackingDownloadActivity()`` (SDE's
    /// `downloadCompletionHandler`).
    public var downloadCompletionHandler: (@Sendable () -> Void)? {
        get { state.withLock { $0.activityCompletionHandler } }
        set { state.withLock { $0.activityCompletionHandler = newValue } }
    }

    /// Whether activity is being tracked.
    public var isTrackingDownloadActivity: Bool { state.withLock { $0.trackingTimer != nil } }

    /// Samples activity every ``Configuration/activityInterval`` (a second) on a timer of its
    /// own and hands each report to ``downloadActivityHandler``, until nothing downloads any
    /// more (then ``downloadCompletionHandler`` runs) or ``stopTrackingDownloadActivity()``.
    /// Does nothing when already tracking.
    public func beginTrackingDownloadActivity() {
        let interval = configuration.activityInterval
        state.withLock { state in
            guard state.trackingTimer == nil else { return }
            let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "peregrine.engine.activity"))
            state.trackingTimer = TrackingTimer(source)
            // The first sample sets the baselines; reports start one interval later.
            _ = takeSample(&state, list: nil)
            source.schedule(
                deadline: .now() + .nanoseconds(Int(interval.wholeNanoseconds)),
                repeating: .nanoseconds(Int(interval.wholeNanoseconds)))
            source.setEventHandler { [weak self] in self?.trackingTick() }
            source.resume()
        }
    }

    /// Stops tracking; ``downloadCompletionHandler`` is not called.
    public func stopTrackingDownloadActivity() {
        state.withLock { state in
            state.trackingTimer?.cancel()
            state.trackingTimer = nil
            state.tracker.reset()
        }
    }

    /// Takes one activity sample now, on the engine's clock: what the tracking timer does each
    /// second, without calling any handler. Tests call it after moving a virtual clock.
    ///
    /// - Parameter list: one list, or every task when nil (the totals cover the same tasks).
    public func sampleActivity(in list: DownloadListKey? = nil) -> ActivityReport {
        state.withLock { takeSample(&$0, list: list) }
    }

    /// One tick of the tracking timer.
    func trackingTick() {
        let (report, handler, completion) = state.withLock {
            state -> (ActivityReport?, (@Sendable (ActivityReport) -> Void)?, (@Sendable () -> Void)?) in
            guard state.trackingTimer != nil else { return (nil, nil, nil) }
            let report = takeSample(&state, list: nil)
            var completion: (@Sendable () -> Void)?
            if report.isIdle {
                state.trackingTimer?.cancel()
                state.trackingTimer = nil
                state.tracker.reset()
                completion = state.activityCompletionHandler
            }
            return (report, state.activityHandler, completion)
        }
        guard let report else { return }
        handler?(report)
        completion?()
    }

    private func takeSample(_ state: inout EngineState, list: DownloadListKey?) -> ActivityReport {
        var inputs: [ActivityTracker.Input] = []
        inputs.reserveCapacity(state.tasks.count)
        for entry in state.tasks.values where list == nil || entry.record.list == list {
            inputs.append(
                ActivityTracker.Input(
                    urlString: entry.record.urlString, state: entry.machine.state, isQueued: entry.machine.isQueued,
                    receivedBytes: entry.receivedBytes, expectedBytes: entry.record.expectedLength,
                    detail: entry.machine.state == .downloading ? nil : Self.detail(of: entry)))
        }
        return state.tracker.sample(at: clock.now(), tasks: inputs)
    }
}

extension Duration {
    /// The duration in whole nanoseconds, rounded down.
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
