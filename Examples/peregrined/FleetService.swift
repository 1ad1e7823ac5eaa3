import PeregrineFleet
import ServiceLifecycle

/// The fleet worker as a service of the daemon's group: it claims and downloads until the
/// group shuts down, then hands the tasks it still holds back to the shared queue.
struct FleetService: Service {
    let worker: FleetWorker

    func run() async throws {
        await cancelWhenGracefulShutdown { await worker.run() }
    }
}
