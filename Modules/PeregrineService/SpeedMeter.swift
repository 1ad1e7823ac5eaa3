/// A download speed estimate from progress samples: a moving average that reads 0 once the
/// samples stop.
struct SpeedMeter: Sendable {
    private var lastBytes: Int64
    private var lastTime: ContinuousClock.Instant
    private var rate: Double = 0

    init(bytes: Int64, at time: ContinuousClock.Instant) {
        lastBytes = bytes
        lastTime = time
    }

    /// Adds a sample of the bytes received so far.
    mutating func record(bytes: Int64, at time: ContinuousClock.Instant) {
        let elapsed = time - lastTime
        guard elapsed >= .milliseconds(200) else { return }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let instant = Double(max(0, bytes - lastBytes)) / seconds
        rate = rate == 0 ? instant : rate * 0.5 + instant * 0.5
        lastBytes = bytes
        lastTime = time
    }

    /// Bytes per second at `time`; 0 when no sample came for three seconds.
    func bytesPerSecond(at time: ContinuousClock.Instant) -> Int64 {
        time - lastTime > .seconds(3) ? 0 : Int64(rate)
    }
}
