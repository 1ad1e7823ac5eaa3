import PeregrineCore
import Synchronization

/// Collects the elements of an `AsyncStream` as they arrive and lets tests wait, with a
/// timeout, until the collected elements satisfy a predicate — no sleeps, no polling.
///
/// The harnesses of the engine and facade tests wrap it and turn a timeout into a failed
/// expectation at the caller's source location.
public final class EventLog<Event: Sendable>: Sendable {
    private struct Waiter {
        var id: UInt64
        var predicate: @Sendable ([Event]) -> Bool
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var events: [Event] = []
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    /// The state in a class, so that the collecting task and the timers can share it.
    private final class Box: Sendable {
        let mutex = Locked(State())
    }

    private let box = Box()

    /// Starts collecting `stream`'s elements.
    public init(_ stream: AsyncStream<Event>) {
        Task { [box] in
            for await event in stream {
                let ready = box.mutex.withLock { state -> [CheckedContinuation<Bool, Never>] in
                    state.events.append(event)
                    let events = state.events
                    var done: [CheckedContinuation<Bool, Never>] = []
                    state.waiters.removeAll { waiter in
                        guard waiter.predicate(events) else { return false }
                        done.append(waiter.continuation)
                        return true
                    }
                    return done
                }
                for continuation in ready { continuation.resume(returning: true) }
            }
        }
    }

    /// The elements so far, in arrival order.
    public var events: [Event] { box.mutex.withLock { $0.events } }

    /// Waits until the elements satisfy `predicate`, or `timeout` passed; returns whether they
    /// did, and the elements at that moment.
    public func wait(
        timeout: Duration, until predicate: @escaping @Sendable ([Event]) -> Bool
    ) async -> (satisfied: Bool, events: [Event]) {
        let id = box.mutex.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let satisfied = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let now = box.mutex.withLock { state -> Bool in
                if predicate(state.events) { return true }
                state.waiters.append(Waiter(id: id, predicate: predicate, continuation: continuation))
                return false
            }
            if now {
                continuation.resume(returning: true)
                return
            }
            Task { [box] in
                try? await Task.sleep(for: timeout)
                let expired = box.mutex.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: false)
            }
        }
        return (satisfied, events)
    }
}
