import PeregrineCore
import PeregrineTransport
import Synchronization
import Testing

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let time = Locked(Duration.zero)
    var reading: BandwidthLimiter.Clock { { [self] in time.withLock { $0 } } }
    func advance(_ duration: Duration) { time.withLock { $0 += duration } }
}

/// The token bucket's arithmetic on an injected clock: waits, bursts, the order tickets are
/// served in, limit changes, nesting, and the average rate of a greedy receiver.
@Suite("BandwidthLimiter")
struct BandwidthLimiterTests {
    static func limit(_ bytesPerSecond: Int64) throws -> SpeedLimit { try SpeedLimit(bytesPerSecond: bytesPerSecond) }

    @Test func aChargeWaitsForItsBytesAtTheRate() throws {
        let clock = ManualClock()
        let limiter = BandwidthLimiter(try Self.limit(1000), clock: clock.reading)
        let (ticket, wait) = limiter.charge(500)
        #expect(ticket == 500)
        #expect(wait == .milliseconds(500))
        clock.advance(.milliseconds(250))
        #expect(limiter.wait(for: ticket) == .milliseconds(250))
        clock.advance(.milliseconds(250))
        #expect(limiter.wait(for: ticket) == .zero)
        #expect(limiter.delayCount == 1)
    }

    @Test func idleTimeIsSavedUpToTheBurstOnly() throws {
        let clock = ManualClock()
        let limiter = BandwidthLimiter(try Self.limit(1000), burst: .milliseconds(100), clock: clock.reading)
        clock.advance(.seconds(10))
        // 100 ms at 1000 B/s: 100 bytes at once, not 10 seconds' worth.
        #expect(limiter.charge(100).wait == .zero)
        #expect(limiter.charge(1).wait == .milliseconds(1))
        #expect(limiter.delayCount == 1)
    }

    @Test func ticketsAreServedInTheOrderTheyWereTaken() throws {
        let clock = ManualClock()
        let limiter = BandwidthLimiter(try Self.limit(1000), clock: clock.reading)
        var first = BandwidthAccount([limiter])
        var second = BandwidthAccount([limiter])
        #expect(first.charge(1000) == .seconds(1))
        #expect(second.charge(1000) == .seconds(2))
        clock.advance(.seconds(1))
        #expect(first.remainingWait() == .zero)
        #expect(second.remainingWait() == .seconds(1))
        // The first goes again and queues behind the second.
        #expect(first.charge(1000) == .seconds(2))
        #expect(limiter.chargedBytes == 3000)
    }

    @Test func aLoweredLimitLengthensTheWaitOfBytesAlreadyCharged() throws {
        let clock = ManualClock()
        let limiter = BandwidthLimiter(try Self.limit(1000), clock: clock.reading)
        var account = BandwidthAccount([limiter])
        #expect(account.charge(1000) == .seconds(1))
        clock.advance(.milliseconds(500))
        // 500 bytes earned at the old rate; the other 500 at 250 B/s take 2 s.
        limiter.limit = try Self.limit(250)
        #expect(account.remainingWait() == .seconds(2))
        limiter.limit = try Self.limit(2000)
        #expect(account.remainingWait() == .milliseconds(250))
        limiter.limit = nil
        #expect(account.remainingWait() == .zero)
        #expect(account.charge(1_000_000) == .zero)
    }

    @Test func aLimitSetOnAnUnlimitedLimiterStartsWithNothingSaved() throws {
        let clock = ManualClock()
        let limiter = BandwidthLimiter(nil, clock: clock.reading)
        #expect(limiter.charge(1 << 20).wait == .zero)
        clock.advance(.seconds(5))
        limiter.limit = try Self.limit(1000)
        #expect(limiter.charge(1000).wait == .seconds(1))
    }

    @Test func anAccountWaitsForItsSlowestLimiter() throws {
        let clock = ManualClock()
        let task = BandwidthLimiter(try Self.limit(1000), clock: clock.reading)
        let global = BandwidthLimiter(try Self.limit(500), clock: clock.reading)
        var account = BandwidthAccount([task, global])
        #expect(account.charge(1000) == .seconds(2))
        clock.advance(.seconds(1))
        #expect(account.remainingWait() == .seconds(1))
        #expect(task.chargedBytes == 1000 && global.chargedBytes == 1000)
    }

    @Test(arguments: [1, 16])
    func greedyReceiversAverageTheLimitOverTenSeconds(receivers: Int) throws {
        let clock = ManualClock()
        let rate: Int64 = 1 << 20
        let limiter = BandwidthLimiter(try Self.limit(rate), clock: clock.reading)
        var accounts = (0..<receivers).map { _ in BandwidthAccount([limiter]) }
        var readyAt = Array(repeating: Duration.zero, count: receivers)
        var received = Array(repeating: Int64(0), count: receivers)
        var now = Duration.zero
        // Each receiver takes 16 KiB whenever its wait is over; the clock jumps to the next one.
        while now < .seconds(12) {
            let next = readyAt.indices.min { readyAt[$0] < readyAt[$1] }!
            clock.advance(readyAt[next] - now)
            now = readyAt[next]
            let wait = accounts[next].charge(16 << 10)
            if now >= .seconds(2) { received[next] += 16 << 10 }
            readyAt[next] = now + wait
        }
        let total = Double(received.reduce(0, +))
        let average = total / 10
        #expect(abs(average - Double(rate)) / Double(rate) < 0.05, "average \(average) B/s")
        for share in received {
            #expect(abs(Double(share) - total / Double(receivers)) / (total / Double(receivers)) < 0.05)
        }
    }
}

@Suite("SpeedLimit")
struct SpeedLimitTests {
    @Test func parsesCurlStyleRates() throws {
        #expect(try SpeedLimit.parse("500K")?.bytesPerSecond == 512_000)
        #expect(try SpeedLimit.parse("500k")?.bytesPerSecond == 512_000)
        #expect(try SpeedLimit.parse("2M")?.bytesPerSecond == 2 << 20)
        #expect(try SpeedLimit.parse("1.5m")?.bytesPerSecond == 3 << 19)
        #expect(try SpeedLimit.parse("1G")?.bytesPerSecond == 1 << 30)
        #expect(try SpeedLimit.parse("1048576")?.bytesPerSecond == 1 << 20)
        #expect(try SpeedLimit.parse("0") == nil)
        #expect(try SpeedLimit.parse("0K") == nil)
    }

    @Test(arguments: ["", "K", "-1", "1.2.3", ".5", "5.", "1T", "fast", "1 M", "١٠", "0.5", "2.5"])
    func refusesWhatIsNotARate(text: String) {
        #expect(throws: SpeedLimitError.self) { try SpeedLimit.parse(text) }
        do {
            _ = try SpeedLimit.parse(text)
        } catch {
            #expect(error.code == .malformed)
        }
    }

    @Test func refusesRatesOutOfRange() {
        do {
            _ = try SpeedLimit(bytesPerSecond: 0)
            Issue.record("0 was accepted")
        } catch { #expect(error.code == .notPositive) }
        do {
            _ = try SpeedLimit(bytesPerSecond: -5)
            Issue.record("-5 was accepted")
        } catch { #expect(error.code == .notPositive) }
        do {
            _ = try SpeedLimit.parse("2000000G")
            Issue.record("2000000G was accepted")
        } catch { #expect(error.code == .tooLarge) }
        do {
            _ = try SpeedLimit.parse("0.2")
            Issue.record("0.2 B/s was accepted")
        } catch { #expect(error.code == .notPositive) }
    }

    @Test func describesItselfInBinaryUnits() throws {
        #expect(try SpeedLimit(bytesPerSecond: 2 << 20).description == "2 MiB/s")
        #expect(try SpeedLimit(bytesPerSecond: 1536).description == "1.50 KiB/s")
        #expect(try SpeedLimit(bytesPerSecond: 900).description == "900 B/s")
    }
}
