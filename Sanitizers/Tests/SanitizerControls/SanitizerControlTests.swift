import Foundation
import PeregrineCore
import Testing

/// Bugs planted for ThreadSanitizer to find. Scripts/sanitize.sh runs each alone with
/// `PEREGRINE_SANITIZER_CONTROL` set to its name and fails unless ThreadSanitizer reports it,
/// which shows the sanitized run can see a race and a lock-order inversion on the lock
/// Peregrine's modules use in sanitizer builds. Without the variable they do nothing.
@Suite struct SanitizerControlTests {
    private static func planted(_ name: String) -> Bool {
        ProcessInfo.processInfo.environment["PEREGRINE_SANITIZER_CONTROL"] == name
    }

    /// Two threads write one integer with nothing ordering the writes.
    @Test(.enabled(if: planted("race")))
    func dataRaceIsReported() async {
        let shared = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        shared.initialize(to: 0)
        let address = UInt(bitPattern: shared)
        let threads = (1...2).map { value in
            Thread {
                // An unsynchronized write: the race the sanitizer must report.
                UnsafeMutablePointer<Int>(bitPattern: address)!.pointee = value
            }
        }
        for thread in threads { thread.start() }
        while !threads.allSatisfy(\.isFinished) { await Task.yield() }
        #expect([1, 2].contains(shared.pointee))
    }

    /// One thread takes lock A then lock B, a later one B then A: the order that deadlocks two
    /// threads when they meet. They never meet here; ThreadSanitizer reports the cycle anyway.
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
