import CoreMetrics

/// What a ``FleetWorker`` reports through swift-metrics: its claims, take-overs, renewals,
/// hand-backs and losses, and the time of each call to the shared queue (a round trip to its
/// database) by call. Made on the factory given to the worker (a service passes the one behind
/// its `/metrics`), else on the process's `MetricsSystem`.
struct FleetMetrics: Sendable {
    let claims: Counter
    let takeOvers: Counter
    let renewedLeases: Counter
    let handedBack: Counter
    let lostLeases: Counter
    let ended: Counter
    let failedCalls: Counter
    private let callTimes: [String: Timer]

    /// The queue's calls, as they are labelled.
    static let calls = ["claim", "renew", "finish", "release", "entries"]

    init(factory: any MetricsFactory) {
        func counter(_ label: String) -> Counter { Counter(label: label, factory: factory) }
        claims = counter("peregrine_fleet_claims_total")
        takeOvers = counter("peregrine_fleet_take_overs_total")
        renewedLeases = counter("peregrine_fleet_lease_renewals_total")
        handedBack = counter("peregrine_fleet_handed_back_total")
        lostLeases = counter("peregrine_fleet_leases_lost_total")
        ended = counter("peregrine_fleet_ended_total")
        failedCalls = counter("peregrine_fleet_queue_errors_total")
        var callTimes: [String: Timer] = [:]
        for call in Self.calls {
            callTimes[call] = Timer(
                label: "peregrine_fleet_queue_call_seconds", dimensions: [("call", call)], factory: factory)
        }
        self.callTimes = callTimes
    }

    /// Records the time a call to the queue took (answered or failed).
    func time(_ call: String, _ duration: Duration) {
        let nanoseconds = duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        callTimes[call]?.recordNanoseconds(nanoseconds)
    }
}
