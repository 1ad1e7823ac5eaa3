/// One sample of download activity: what SDEDownloadManager's `downloadActivityHandler`
/// receives each second, plus Tiercel's totals and remaining times.
public struct ActivityReport: Sendable, Hashable {
    /// When the sample was taken, on the engine's clock.
    public var time: Duration
    /// The tasks that are downloading, and — once, with a speed of -1 — those that stopped
    /// downloading since the previous sample. Keyed by URL string.
    public var tasks: [String: TaskActivity]
    /// Sums over every task of the engine (or of the list sampled).
    public var totals: ActivityTotals

    /// Creates a report.
    public init(time: Duration, tasks: [String: TaskActivity], totals: ActivityTotals) {
        self.time = time
        self.tasks = tasks
        self.totals = totals
    }

    /// Whether nothing is downloading any more: tracking ends after such a report.
    public var isIdle: Bool { totals.downloadingCount == 0 }
}

/// The activity of one task in an ``ActivityReport``.
public struct TaskActivity: Sendable, Hashable {
    /// Bytes of the file received so far.
    public var receivedBytes: Int64
    /// The file's size, or -1 when unknown.
    public var expectedBytes: Int64
    /// Bytes received over the last second; 0 when nothing arrived (a stall), -1 once the
    /// task no longer downloads.
    public var speed: Int64
    /// The speed averaged over the tracker's window (10 s by default); -1 once over.
    public var smoothedSpeed: Int64
    /// The time left at the smoothed speed; nil when the size is unknown, nothing arrives, or
    /// the task is over.
    public var remainingTime: Duration?
    /// SDE's detail text, set only once the task is over: `41.6 MB/402.5 MB` when paused or
    /// stopped, `402.5 MB` when finished, the reason when failed.
    public var detail: String?

    /// Creates a value.
    public init(
        receivedBytes: Int64, expectedBytes: Int64, speed: Int64, smoothedSpeed: Int64, remainingTime: Duration?,
        detail: String?
    ) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
        self.speed = speed
        self.smoothedSpeed = smoothedSpeed
        self.remainingTime = remainingTime
        self.detail = detail
    }

    /// Whether the task stopped downloading (speed -1): remove its speed from the view.
    public var isOver: Bool { speed < 0 }
}

/// Totals over the tasks of an engine, in an ``ActivityReport``.
public struct ActivityTotals: Sendable, Hashable {
    /// The sum of the speeds of the downloading tasks, in bytes per second.
    public var speed: Int64 = 0
    /// Bytes received over the tasks whose size is known (a finished task counts whole).
    public var receivedBytes: Int64 = 0
    /// The sum of the sizes that are known.
    public var expectedBytes: Int64 = 0
    /// `receivedBytes / expectedBytes`, in 0…1; 0 when no size is known.
    public var progress: Double = 0
    /// Tasks downloading.
    public var downloadingCount = 0
    /// Tasks waiting in a queue for a slot.
    public var waitingCount = 0
    /// Tasks pending without waiting (never started, or stopped without a resume record).
    public var pendingCount = 0
    /// Tasks paused with their connection kept.
    public var pausedCount = 0
    /// Tasks stopped with a resume record.
    public var stoppedCount = 0
    /// Tasks finished.
    public var finishedCount = 0
    /// Tasks failed.
    public var failedCount = 0

    /// Creates empty totals.
    public init() {}

    /// Every task counted.
    public var taskCount: Int {
        downloadingCount + waitingCount + pendingCount + pausedCount + stoppedCount + finishedCount + failedCount
    }
}
