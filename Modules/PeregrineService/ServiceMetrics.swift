import CoreMetrics
import Peregrine
import PeregrineCore
import Prometheus
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The service's metrics, served at `/metrics` in Prometheus' text format: swift-metrics
/// objects made by a factory on the service's own registry, so that two services in one
/// process count apart and nothing depends on the process-wide `MetricsSystem`.
///
/// Counters move as calls are answered and as the manager's events come; the gauges of the
/// downloads by status and their speed are read from the service when `/metrics` is scraped,
/// so they match `aria2.getGlobalStat` at that moment.
public final class ServiceMetrics: Sendable {
    /// The registry the text is made from.
    public let registry: PrometheusCollectorRegistry
    private let calls: [String: (count: CoreMetrics.Counter, time: CoreMetrics.Timer)]
    private let unknownCalls: CoreMetrics.Counter
    private let finished: CoreMetrics.Counter
    private let failures: Locked<[String: CoreMetrics.Counter]>
    private let retries: Locked<[String: CoreMetrics.Counter]>
    private let prometheusFactory: PrometheusMetricsFactory
    private let received: CoreMetrics.Counter
    /// Each running download's bytes at its last event, and the length it announced: received
    /// bytes count once.
    private let progress = Locked<[String: (received: Int64, expected: Int64?)]>([:])
    private let downloads: [String: CoreMetrics.Gauge]
    private let speed: CoreMetrics.Gauge
    private let webSocketClients: CoreMetrics.Gauge
    private let droppedNotifications: CoreMetrics.Counter
    /// The hub's count at the last scrape: the counter moves by the difference.
    private let droppedSoFar = Locked(0)

    /// The factory whose metrics `/metrics` serves: what the service's parts report through
    /// swift-metrics (a fleet worker's `peregrine_fleet_…`) goes there.
    public var factory: any MetricsFactory { prometheusFactory }

    /// The statuses of `peregrine_downloads`, as `aria2.getGlobalStat` counts them.
    static let statuses = ["active", "waiting", "stopped"]

    /// Metrics for the service's methods (any other method name counts as unknown, so that a
    /// client cannot make series without bound).
    init(methods: [String]) {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        // Answers take microseconds to seconds (a fleet's database, a large batch).
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100),
            .milliseconds(500), .seconds(2), .seconds(10),
        ]
        self.prometheusFactory = factory
        var calls: [String: (CoreMetrics.Counter, CoreMetrics.Timer)] = [:]
        for method in Set(methods) {
            calls[method] = (
                CoreMetrics.Counter(
                    label: "peregrine_rpc_calls_total", dimensions: [("method", method)], factory: factory),
                CoreMetrics.Timer(
                    label: "peregrine_rpc_call_seconds", dimensions: [("method", method)], factory: factory)
            )
        }
        self.calls = calls
        unknownCalls = CoreMetrics.Counter(
            label: "peregrine_rpc_calls_total", dimensions: [("method", "unknown")], factory: factory)
        finished = CoreMetrics.Counter(label: "peregrine_downloads_finished_total", factory: factory)
        failures = Locked([:])
        retries = Locked([:])
        received = CoreMetrics.Counter(label: "peregrine_received_bytes_total", factory: factory)
        var downloads: [String: CoreMetrics.Gauge] = [:]
        for status in Self.statuses {
            downloads[status] = CoreMetrics.Gauge(
                label: "peregrine_downloads", dimensions: [("status", status)], factory: factory)
        }
        self.downloads = downloads
        speed = CoreMetrics.Gauge(label: "peregrine_download_speed_bytes_per_second", factory: factory)
        webSocketClients = CoreMetrics.Gauge(label: "peregrine_websocket_clients", factory: factory)
        droppedNotifications = CoreMetrics.Counter(label: "peregrine_notifications_dropped_total", factory: factory)
    }

    /// Counts an answered call of `method` that took `duration`.
    func recordCall(_ method: String, duration: Duration) {
        guard let metrics = calls[method] else {
            unknownCalls.increment()
            return
        }
        metrics.count.increment()
        metrics.time.recordNanoseconds(duration.nanoseconds)
    }

    /// Follows a manager event: received bytes, finished and failed downloads (by failure
    /// code).
    func record(_ event: EngineEvent) {
        switch event {
        case .started(let url, let offset):
            progress.withLock { $0[url] = (offset, nil) }
        case .progress(let url, let bytes, let expected):
            add(bytes, expected: expected, of: url)
        case .finished(let url, let file):
            // The bytes after the last progress event: up to the length announced, else the
            // file's (a small file may finish before any progress event).
            let last = progress.withLock { $0.removeValue(forKey: url) }
            var length = last?.expected
            if length == nil {
                var info = stat()
                if stat(file.path, &info) == 0 { length = Int64(info.st_size) }
            }
            let rest = max(0, (length ?? 0) - (last?.received ?? 0))
            if rest > 0 { received.increment(by: rest) }
            finished.increment()
        case .failed(let url, let reason):
            progress.withLock { _ = $0.removeValue(forKey: url) }
            counter(in: failures, "peregrine_downloads_failed_total", reason).increment()
        case .retrying(let url, _, let reason):
            progress.withLock { _ = $0.removeValue(forKey: url) }
            counter(in: retries, "peregrine_download_retries_total", reason).increment()
        case .stopped(let url), .paused(let url), .deleted(let url):
            progress.withLock { _ = $0.removeValue(forKey: url) }
        default:
            break
        }
    }

    /// The counter of `label` for `reason`'s code, made at its first use (codes are a closed set).
    private func counter(
        in counters: borrowing Locked<[String: CoreMetrics.Counter]>, _ label: String, _ reason: FailureReason
    )
        -> CoreMetrics.Counter
    {
        let code = reason.code.rawValue
        return counters.withLock { counters in
            if let counter = counters[code] { return counter }
            let counter = CoreMetrics.Counter(label: label, dimensions: [("reason", code)], factory: prometheusFactory)
            counters[code] = counter
            return counter
        }
    }

    private func add(_ bytes: Int64, expected: Int64?, of url: String) {
        let delta = progress.withLock { progress -> Int64 in
            let previous = progress[url]?.received ?? bytes
            progress[url] = (max(previous, bytes), expected)
            return max(0, bytes - previous)
        }
        if delta > 0 { received.increment(by: delta) }
    }

    /// The text for `/metrics`, with the gauges set from `stat` (`aria2.getGlobalStat`'s
    /// numbers) and the WebSocket clients now connected, and the notifications the clients lost
    /// so far.
    func text(
        active: Int, waiting: Int, stopped: Int, speed bytesPerSecond: Int64, webSocketClients clients: Int,
        droppedNotifications dropped: Int
    ) -> String {
        let newlyDropped = droppedSoFar.withLock { soFar in
            defer { soFar = max(soFar, dropped) }
            return max(0, dropped - soFar)
        }
        if newlyDropped > 0 { droppedNotifications.increment(by: Int64(newlyDropped)) }
        downloads["active"]?.record(active)
        downloads["waiting"]?.record(waiting)
        downloads["stopped"]?.record(stopped)
        speed.record(bytesPerSecond)
        webSocketClients.record(clients)
        return registry.emitToString()
    }
}

extension Duration {
    fileprivate var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
