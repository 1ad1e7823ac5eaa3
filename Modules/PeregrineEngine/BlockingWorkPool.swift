import Dispatch
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

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var threads = 0
        var idle = 0
    }

    /// The most threads at once.
    package let maxThreads: Int
    /// How long a thread waits for a job before it ends.
    package let idleTimeout: DispatchTimeInterval
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)

    package init(maxThreads: Int, idleTimeout: DispatchTimeInterval = .seconds(5)) {
        self.maxThreads = max(1, maxThreads)
        self.idleTimeout = idleTimeout
    }

    /// The threads running now, idle or not.
    package var threadCount: Int { state.withLock { $0.threads } }

    /// Runs `job` on a thread of the pool, starting one when none is idle and fewer than
    /// ``maxThreads`` run.
    package func async(_ job: @escaping Job) {
        let startsThread = state.withLock { state -> Bool in
            state.jobs.append(job)
            if state.idle > 0 {
                state.idle -= 1
                return false
            }
            guard state.threads < maxThreads else { return false }
            state.threads += 1
            return true
        }
        if startsThread { startThread() } else { available.signal() }
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
            DispatchQueue.global(qos: .utility).async { self.take(markingIdle: false)?() }
        }
    }

    /// A thread's loop: take jobs while there are any; then wait, counted idle, for a signal
    /// (which reserves the next job for this thread) or end after the idle timeout.
    private func work() {
        while true {
            if let job = take(markingIdle: true) {
                job()
                continue
            }
            if available.wait(timeout: .now() + idleTimeout) == .success { continue }
            let ends = state.withLock { state -> Bool in
                // A job submitted since the timeout reserved an idle thread: unless another
                // idle thread is left unreserved, that is this one, and its signal is coming.
                guard state.idle > 0 else { return false }
                state.idle -= 1
                state.threads -= 1
                return true
            }
            if ends { return }
            available.wait()
        }
    }

    /// Takes the oldest job; when there is none, counts the calling thread idle if asked to.
    private func take(markingIdle: Bool) -> Job? {
        state.withLock { state -> Job? in
            guard state.head < state.jobs.count else {
                if markingIdle { state.idle += 1 }
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
