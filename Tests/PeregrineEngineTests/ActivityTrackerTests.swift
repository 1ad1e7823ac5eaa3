import PeregrineCore
import PeregrineEngine
import Testing

/// Speeds, stalls, remaining times and totals from the pure tracker on an explicit clock.
@Suite("ActivityTracker")
struct ActivityTrackerTests {
    func input(_ url: String, _ state: DownloadState, _ received: Int64, _ expected: Int64?, detail: String? = nil)
        -> ActivityTracker.Input
    {
        ActivityTracker.Input(
            urlString: url, state: state, receivedBytes: received, expectedBytes: expected, detail: detail)
    }

    @Test func speedIsTheBytesOfTheLastSecondAndZeroOnAStall() {
        var tracker = ActivityTracker()
        let first = tracker.sample(at: .zero, tasks: [input("a", .downloading, 0, 1_000_000)])
        #expect(first.tasks["a"]?.speed == 0, "no baseline yet")
        let second = tracker.sample(at: .seconds(1), tasks: [input("a", .downloading, 100_000, 1_000_000)])
        #expect(second.tasks["a"]?.speed == 100_000)
        let third = tracker.sample(at: .seconds(2), tasks: [input("a", .downloading, 250_000, 1_000_000)])
        #expect(third.tasks["a"]?.speed == 150_000)
        let stalled = tracker.sample(at: .seconds(3), tasks: [input("a", .downloading, 250_000, 1_000_000)])
        #expect(stalled.tasks["a"]?.speed == 0, "a stall reports 0, not the last speed")
        #expect(stalled.totals.speed == 0)
    }

    @Test func speedIsPerSecondWhenSamplesAreFurtherApart() {
        var tracker = ActivityTracker()
        _ = tracker.sample(at: .zero, tasks: [input("a", .downloading, 0, nil)])
        let report = tracker.sample(at: .seconds(2), tasks: [input("a", .downloading, 300_000, nil)])
        #expect(report.tasks["a"]?.speed == 150_000)
        #expect(report.tasks["a"]?.expectedBytes == -1)
        #expect(report.tasks["a"]?.remainingTime == nil, "unknown size: no estimate")
    }

    @Test func remainingTimeUsesTheSpeedSmoothedOverTheWindow() {
        var tracker = ActivityTracker(window: .seconds(10))
        var received: Int64 = 0
        _ = tracker.sample(at: .zero, tasks: [input("a", .downloading, 0, 10_000_000)])
        for second in 1...10 {
            received += 100_000
            _ = tracker.sample(at: .seconds(second), tasks: [input("a", .downloading, received, 10_000_000)])
        }
        // One slow second barely moves the smoothed speed.
        received += 10_000
        let report = tracker.sample(at: .seconds(11), tasks: [input("a", .downloading, received, 10_000_000)])
        let activity = report.tasks["a"]!
        #expect(activity.speed == 10_000)
        #expect(activity.smoothedSpeed == 91_000)  // 910 000 bytes over the last 10 s
        #expect(activity.remainingTime == .seconds(Double(10_000_000 - received) / 91_000))
    }

    @Test func aTaskThatStopsIsReportedOnceWithMinusOneAndItsDetail() {
        var tracker = ActivityTracker()
        _ = tracker.sample(at: .zero, tasks: [input("a", .downloading, 0, 1000)])
        let over = tracker.sample(at: .seconds(1), tasks: [input("a", .paused, 500, 1000, detail: "500 bytes/1 KB")])
        #expect(over.tasks["a"]?.speed == -1)
        #expect(over.tasks["a"]?.isOver == true)
        #expect(over.tasks["a"]?.detail == "500 bytes/1 KB")
        #expect(over.isIdle)
        let later = tracker.sample(at: .seconds(2), tasks: [input("a", .paused, 500, 1000)])
        #expect(later.tasks.isEmpty, "reported once")
    }

    @Test func totalsCoverEveryTask() {
        var tracker = ActivityTracker()
        _ = tracker.sample(at: .zero, tasks: [input("a", .downloading, 0, 1000), input("b", .downloading, 0, 3000)])
        var waiting = input("w", .pending, 0, nil)
        waiting.isQueued = true
        let report = tracker.sample(
            at: .seconds(1),
            tasks: [
                input("a", .downloading, 200, 1000), input("b", .downloading, 300, 3000),
                input("c", .finished, 0, 2000),
                input("d", .failed(FailureReason(.network, message: "x")), 0, nil), waiting,
                input("p", .pending, 0, nil), input("s", .stopped, 500, 4000), input("z", .paused, 0, nil),
            ])
        #expect(report.totals.speed == 500)
        #expect(report.totals.expectedBytes == 10_000)
        #expect(report.totals.receivedBytes == 200 + 300 + 2000 + 500)
        #expect(report.totals.progress == 0.3)
        #expect(report.totals.downloadingCount == 2)
        #expect(report.totals.finishedCount == 1)
        #expect(report.totals.failedCount == 1)
        #expect(report.totals.waitingCount == 1)
        #expect(report.totals.pendingCount == 1)
        #expect(report.totals.stoppedCount == 1)
        #expect(report.totals.pausedCount == 1)
        #expect(report.totals.taskCount == 8)
        #expect(!report.isIdle)
    }

    @Test func aRestartFromZeroResetsTheBaseline() {
        var tracker = ActivityTracker()
        _ = tracker.sample(at: .zero, tasks: [input("a", .downloading, 0, 1000)])
        _ = tracker.sample(at: .seconds(1), tasks: [input("a", .downloading, 800, 1000)])
        let report = tracker.sample(at: .seconds(2), tasks: [input("a", .downloading, 100, 1000)])
        #expect(report.tasks["a"]?.speed == 0)
    }
}
