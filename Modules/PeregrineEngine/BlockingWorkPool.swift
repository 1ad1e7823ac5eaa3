import Dispatch
import PeregrineCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Threads of the engine's own for work that blocks on the disk: syncing a finished file,
/// renaming it into place, recording it in the store.
///
/// Dispatch's global pool runs about one thread per core and does not notice a thread blocked
/// in `fsync`, so sixteen transfers finishing at once would sync their files two at a time,
/// each sync waiting for a journal commit of its own. Here a job that finds no idle thread gets
/// a new one, up to ``maxThreads``: syncs issued together share the file system's commits.
/// Threads that stay idle for ``idleTimeout`` end, so an idle engine holds none.
///
/// Jobs start in the order they were submitted; they may run concurrently.
package final class BlockingWorkPool: Sendable {
    package typealias Job = @Sendable () -> Void

    /// An idle thread's wake-up. A job that finds idle threads takes one off the list before it
    /// signals it, so a signal is never left pending for a thread that is not waiting, and a
    /// thread whose wait timed out knows from the list whether a job has reserved it.
    private final class Waiter: Sendable {
        let wake = DispatchSemaphore(value: 0)
    }

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var threads = 0
        var idle: [Waiter] = []
    }

    /// The most threads at once.
    package let maxThreads: Int
    /// How long a thread waits for a job before it ends.
    package let idleTimeout: DispatchTimeInterval
    private let state = Locked(State())

    package init(maxThreads: Int, idleTimeout: DispatchTimeInterval = .seconds(5)) {
        self.maxThreads = max(1, maxThreads)
        self.idleTimeout = idleTimeout
    }

    /// The threads running now, idle or not.
    package var threadCount: Int { state.withLock { $0.threads } }

    /// Runs `job` on a thread of the pool, starting one when none is idle and fewer than
    /// ``maxThreads`` run. When every thread is busy, the first to finish its job takes it.
    package func async(_ job: @escaping Job) {
        let (waiter, startsThread) = state.withLock { state -> (Waiter?, Bool) in
            state.jobs.append(job)
            if let waiter = state.idle.popLast() { return (waiter, false) }
            guard state.threads < maxThreads else { return (nil, false) }
            state.threads += 1
            return (nil, true)
        }
        waiter?.wake.signal()
        if startsThread { startThread() }
    }

    private func startThread() {
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { argument in
                let pool = Unmanaged<BlockingWorkPool>.fromOpaque(argument!).takeRetainedValue()
                pool.work()
                return nil
            },
            Unmanaged.passRetained(self).toOpaque())
        if started == 0 {
            pthread_detach(thread)
        } else {
            // No thread: run a job where a thread would have, so that it is never lost.
            Unmanaged.passUnretained(self).release()
            state.withLock { $0.threads -= 1 }
            DispatchQueue.global(qos: .utility).async { self.take(orWaitWith: nil)?() }
        }
    }

    /// A thread's loop: take jobs while there are any; then wait on the idle list for a job to
    /// reserve this thread, or end after the idle timeout if none did.
    private func work() {
        let waiter = Waiter()
        while true {
            if let job = take(orWaitWith: waiter) {
                job()
                continue
            }
            if waiter.wake.wait(timeout: .now() + idleTimeout) == .success { continue }
            let ends = state.withLock { state -> Bool in
                guard let index = state.idle.firstIndex(where: { $0 === waiter }) else {
                    // A job took this thread off the list after the timeout: its signal is coming.
                    return false
                }
                state.idle.remove(at: index)
                state.threads -= 1
                return true
            }
            if ends { return }
            waiter.wake.wait()
        }
    }

    /// Takes the oldest job; when there is none, puts `waiter` on the idle list (in the same
    /// section, so that a job submitted next finds it).
    private func take(orWaitWith waiter: Waiter?) -> Job? {
        state.withLock { state -> Job? in
            guard state.head < state.jobs.count else {
                if let waiter { state.idle.append(waiter) }
                return nil
            }
            let job = state.jobs[state.head]
            state.head += 1
            if state.head == state.jobs.count {
                state.jobs.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 64, state.head * 2 >= state.jobs.count {
                state.jobs.removeFirst(state.head)
                state.head = 0
            }
            return job
        }
    }
}
