import PeregrineCore
import Synchronization

/// Collects the elements of an `AsyncStream` as they arrive — a manager's events, say — and
/// waits, with a timeout, until they satisfy a condition: no sleeps, no polling.
///
/// Start it before the operation whose events you wait for (`DownloadManager.events()` only
/// carries events from the moment it is called).
public final class EventRecorder<Event: Sendable>: Sendable {
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

    private final class Box: Sendable {
        let state = Locked(State())
    }

    private let box = Box()

    /// Starts collecting `stream`'s elements.
    public init(_ stream: AsyncStream<Event>) {
        Task { [box] in
            for await event in stream {
                let ready = box.state.withLock { state -> [CheckedContinuation<Bool, Never>] in
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
    public var events: [Event] { box.state.withLock { $0.events } }

    /// Waits until the elements satisfy `predicate` and returns them.
    ///
    /// - Throws: ``TestKitError`` when `timeout` passes first (it names what had arrived).
    @discardableResult
    public func wait(
        timeout: Duration = .seconds(20), until predicate: @escaping @Sendable ([Event]) -> Bool
    ) async throws(TestKitError) -> [Event] {
        let id = box.state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let satisfied = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let now = box.state.withLock { state -> Bool in
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
                let expired = box.state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: false)
            }
        }
        let events = self.events
        guard satisfied else { throw TestKitError("timed out after \(timeout) waiting for events; got \(events)") }
        return events
    }
}
