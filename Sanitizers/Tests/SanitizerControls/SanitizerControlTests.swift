import Foundation
import PeregrineCore
import Synchronization
import Testing

/// Bugs planted for ThreadSanitizer to find. Scripts/sanitize.sh runs each alone with
/// `PEREGRINE_SANITIZER_CONTROL` set to its name and fails unless ThreadSanitizer reports it,
/// which shows the sanitized run can see a race and a lock-order inversion on the lock
/// Peregrine's modules use in sanitizer builds. Without the variable they do nothing.
@Suite struct SanitizerControlTests {
    private static func planted(_ name: String) -> Bool {
        ProcessInfo.processInfo.environment["PEREGRINE_SANITIZER_CONTROL"] == name
    }

    /// Two threads write one integer with nothing ordering the writes. Each waits until both
    /// are running before it writes, and until both have written before it ends (relaxed
    /// atomics, which order nothing for ThreadSanitizer): a thread that has ended may look ordered
    /// before later accesses to ThreadSanitizer, and Foundation's thread bookkeeping takes locks.
    /// Each writes many times, interleaved with the other's: one write each was missed in one
    /// run of seven (a CI run of 2026-11-27).
    @Test(.enabled(if: planted("race")))
    func dataRaceIsReported() async {
        final class Shared: @unchecked Sendable {
            let running = Atomic<Int>(0)
            let written = Atomic<Int>(0)
            let finished = Atomic<Int>(0)
            let value = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        }
        let shared = Shared()
        for value in 1...2 {
            Thread {
                shared.running.add(1, ordering: .relaxed)
                while shared.running.load(ordering: .relaxed) < 2 {}
                // Unsynchronized writes: the race the sanitizer must report.
                for round in 0..<10_000 { shared.value.pointee = value &+ round }
                shared.written.add(1, ordering: .relaxed)
                while shared.written.load(ordering: .relaxed) < 2 {}
                shared.finished.add(1, ordering: .relaxed)
            }.start()
        }
        while shared.finished.load(ordering: .relaxed) < 2 { await Task.yield() }
        shared.value.deallocate()
    }

    /// One thread takes lock A then lock B, a later one B then A: the order that deadlocks two
    /// threads when they meet. They never meet here; SanitizerMutex's lock-order check reports
    /// the cycle anyway (this toolchain's ThreadSanitizer runtime reports none).
    @Test(.enabled(if: planted("lock-order")))
    func lockOrderInversionIsReported() {
        let first = SanitizerMutex(0)
        let second = SanitizerMutex(0)
        first.withLock { a in
            second.withLock { b in
                a += 1; b += 1
            }
        }
        second.withLock { b in
            first.withLock { a in
                a += 1; b += 1
            }
        }
        #expect(first.withLock { $0 } == 2)
    }
}
