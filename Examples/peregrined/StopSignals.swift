import Logging
import ServiceLifecycle
import UnixSignals

/// The daemon's stop signals, as a service whose end shuts the group down gracefully (the
/// transfers stop with their resume records, a fleet service hands back what it holds).
///
/// SIGTERM or SIGINT first drains, when `--drain-timeout` gives a period: no download starts
/// (a fleet service claims nothing and hands back the tasks it has not started), and the
/// running ones have the period to finish. SIGQUIT, or a second SIGTERM or SIGINT, stops at once,
/// also in the middle of a drain.
struct StopSignals: Service {
    let drainTimeout: Duration
    let logger: Logger
    /// Begins the drain and returns once nothing runs any more, or when cancelled.
    let drain: @Sendable () async -> Void

    private enum Event: Sendable {
        case signal(UnixSignal)
        case drained
    }

    func run() async {
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint, .sigquit)
        let (events, sink) = AsyncStream<Event>.makeStream()
        let drainTimeout = self.drainTimeout
        let drain = self.drain
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await signal in signals { sink.yield(.signal(signal)) }
            }
            var draining = false
            // A shutdown begun elsewhere (aria2.shutdown) ends this service too.
            for await event in events.cancelOnGracefulShutdown() {
                switch event {
                case .signal(let signal):
                    if draining || signal == .sigquit || drainTimeout <= .zero {
                        logger.notice("\(signal): stopping now")
                        group.cancelAll()
                        return
                    }
                    draining = true
                    logger.notice("\(signal): draining for up to \(drainTimeout) before stopping")
                    SystemdNotifier.notify("STATUS=draining")
                    group.addTask {
                        await withTaskGroup(of: Void.self) { period in
                            period.addTask { await drain() }
                            period.addTask { try? await Task.sleep(for: drainTimeout) }
                            await period.next()
                            period.cancelAll()
                        }
                        sink.yield(.drained)
                    }
                case .drained:
                    logger.notice("drain over: stopping")
                    group.cancelAll()
                    return
                }
            }
            group.cancelAll()
        }
    }
}
