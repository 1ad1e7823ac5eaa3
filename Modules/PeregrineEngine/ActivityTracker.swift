import PeregrineCore

/// Turns the byte counts of tasks, sampled about once a second, into speeds, remaining times
/// and totals. A pure value: the caller passes the time of each sample (from an injected
/// clock), so tests run it on a virtual clock.
///
/// - Speed is the bytes received since the previous sample, per second of the time between
///   the two: 0 when nothing arrived (Tiercel kept the last speed during a stall; a bug), and
///   -1 in the one report after the task stopped downloading, which also carries its detail.
///   A task seen for the first time has speed 0 (no baseline yet).
/// - The remaining time divides the bytes left by a speed smoothed over ``window`` (10 s, as
///   aria2), so one slow second does not make the estimate jump.
public struct ActivityTracker: Sendable {
    /// What the tracker needs to know about one task at a sample.
    public struct Input: Sendable, Hashable {
        /// The task's URL string.
        public var urlString: String
        /// Its state.
        public var state: DownloadState
        /// Whether it waits in a queue (when `pending`).
        public var isQueued: Bool
        /// Bytes of the file received so far.
        public var receivedBytes: Int64
        /// The file's size, when known.
        public var expectedBytes: Int64?
        /// The text to show once the task is over (see ``TaskActivity/detail``).
        public var detail: String?

        /// Creates an input.
        public init(
            urlString: String, state: DownloadState, isQueued: Bool = false, receivedBytes: Int64,
            expectedBytes: Int64?, detail: String? = nil
        ) {
            self.urlString = urlString
            self.state = state
            self.isQueued = isQueued
            self.receivedBytes = receivedBytes
            self.expectedBytes = expectedBytes
            self.detail = detail
        }
    }

    private struct Point: Sendable {
        var time: Duration
        var bytes: Int64
    }

    /// The span over which the speed for the remaining time is averaged.
    public let window: Duration
    private var histories: [String: [Point]] = [:]

    /// Creates a tracker.
    public init(window: Duration = .seconds(10)) {
        precondition(window > .zero, "the smoothing window is positive")
        self.window = window
    }

    /// Whether any task is being followed (it downloaded at the previous sample).
    public var isFollowingTasks: Bool { !histories.isEmpty }

    /// Forgets every task, so the next sample starts without baselines.
    public mutating func reset() { histories.removeAll() }

    /// Takes a sample at `now`.
    ///
    /// - Parameters:
    ///   - now: the time of the sample; never earlier than the previous one.
    ///   - tasks: every task to count in the totals; those `downloading` are reported.
    public mutating func sample(at now: Duration, tasks: [Input]) -> ActivityReport {
        var report: [String: TaskActivity] = [:]
        var totals = ActivityTotals()
        var stillFollowed: Set<String> = []
        for task in tasks {
            count(task, into: &totals)
            guard task.state == .downloading else { continue }
            stillFollowed.insert(task.urlString)
            let activity = follow(task, at: now)
            totals.speed += activity.speed
            report[task.urlString] = activity
        }
        // The tasks that stopped downloading since the previous sample: one last report.
        let byURL = Dictionary(tasks.map { ($0.urlString, $0) }, uniquingKeysWith: { first, _ in first })
        for urlString in histories.keys where !stillFollowed.contains(urlString) {
            let task = byURL[urlString]
            report[urlString] = TaskActivity(
                receivedBytes: task?.receivedBytes ?? histories[urlString]?.last?.bytes ?? 0,
                expectedBytes: task?.expectedBytes ?? -1, speed: -1, smoothedSpeed: -1, remainingTime: nil,
                detail: task?.detail)
            histories[urlString] = nil
        }
        totals.progress =
            totals.expectedBytes > 0 ? min(1, Double(totals.receivedBytes) / Double(totals.expectedBytes)) : 0
        return ActivityReport(time: now, tasks: report, totals: totals)
    }

    private mutating func follow(_ task: Input, at now: Duration) -> TaskActivity {
        var history = histories[task.urlString] ?? []
        var speed: Int64 = 0
        if let last = history.last {
            if task.receivedBytes < last.bytes {
                // Restarted from zero: the old baseline means nothing now.
                history.removeAll()
            } else {
                speed = Self.rate(task.receivedBytes - last.bytes, over: now - last.time)
            }
        }
        history.append(Point(time: now, bytes: task.receivedBytes))
        let horizon = now - window
        if let lastOutside = history.lastIndex(where: { $0.time <= horizon }), lastOutside > 0 {
            // Keep the last point at or before the horizon, so the average spans the whole window.
            history.removeFirst(lastOutside)
        }
        histories[task.urlString] = history
        let oldest = history[0]
        let smoothed = Self.rate(task.receivedBytes - oldest.bytes, over: now - oldest.time)
        var remaining: Duration?
        if let expected = task.expectedBytes, expected >= 0 {
            let left = max(0, expected - task.receivedBytes)
            if left == 0 {
                remaining = .zero
            } else if smoothed > 0 {
                remaining = .seconds(Double(left) / Double(smoothed))
            }
        }
        return TaskActivity(
            receivedBytes: task.receivedBytes, expectedBytes: task.expectedBytes ?? -1, speed: speed,
            smoothedSpeed: smoothed, remainingTime: remaining, detail: nil)
    }

    private static func rate(_ bytes: Int64, over elapsed: Duration) -> Int64 {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        guard seconds > 0, bytes > 0 else { return 0 }
        return Int64((Double(bytes) / seconds).rounded())
    }

    private func count(_ task: Input, into totals: inout ActivityTotals) {
        switch task.state {
        case .notInList: return
        case .pending:
            if task.isQueued { totals.waitingCount += 1 } else { totals.pendingCount += 1 }
        case .downloading: totals.downloadingCount += 1
        case .paused: totals.pausedCount += 1
        case .stopped: totals.stoppedCount += 1
        case .finished: totals.finishedCount += 1
        case .failed: totals.failedCount += 1
        }
        guard let expected = task.expectedBytes, expected >= 0 else { return }
        totals.expectedBytes += expected
        totals.receivedBytes += task.state == .finished ? expected : min(task.receivedBytes, expected)
    }
}
