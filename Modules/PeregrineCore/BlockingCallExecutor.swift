#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A task executor with threads of its own, for async code that makes blocking calls — a
/// round trip to a fleet's database, which may wait for a connect timeout while the server is
/// away. Run under it (`withTaskExecutorPreference(BlockingCallExecutor.shared) { … }`), such
/// code blocks these threads, never the cooperative pool's (two on a two-core machine), so the
/// rest of the process — transfers, events, other clients — goes on.
///
/// One executor per process (``shared``), started at first use, and one for each caller that
/// must not queue behind the others; their threads live as long as the process, idle while
/// nothing runs on them.
package final class BlockingCallExecutor: TaskExecutor, @unchecked Sendable {
    /// The process's executor, with two threads.
    package static let shared = BlockingCallExecutor(threads: 2)

    // The jobs waiting for a thread, under a pthread mutex and condition (allocated once).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var jobs: [UnownedJob] = []
    private var next = 0
    /// The executor's threads (`ThreadIdentity`), as they started.
    private var threads: Set<UInt> = []
    /// Set by ``stopWhenIdle()``: the threads end once no job is left.
    private var stopping = false

    /// An executor of its own, for a caller whose blocking calls must not wait behind others'
    /// (a fleet worker's lease renewals behind its clients' reads). Its threads live as long as
    /// the process.
    package init(threads: Int) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
        for _ in 0..<threads { start() }
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    private func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        #if canImport(Darwin)
            var thread: pthread_t?
        #else
            var thread = pthread_t()
        #endif
        let created = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<BlockingCallExecutor>.fromOpaque(context!).takeRetainedValue().work()
                return nil
            }, context)
        precondition(created == 0, "cannot start a thread for blocking calls: error \(created)")
        #if canImport(Darwin)
            pthread_detach(thread!)
        #else
            pthread_detach(thread)
        #endif
    }

    /// Whether the calling thread is one of this executor's.
    package var isCurrentThread: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return threads.contains(ThreadIdentity.current)
    }

    /// Ends the threads once they ran every job enqueued so far: for an executor of one caller
    /// (see ``init(threads:)``) whose work is done. Nothing may be enqueued afterwards.
    package func stopWhenIdle() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    private func work() {
        pthread_mutex_lock(mutex)
        threads.insert(ThreadIdentity.current)
        pthread_mutex_unlock(mutex)
        while true {
            pthread_mutex_lock(mutex)
            while next == jobs.count {
                // Drop what ran, so the array does not grow while the executor is busy.
                jobs.removeAll(keepingCapacity: true)
                next = 0
                if stopping {
                    threads.remove(ThreadIdentity.current)
                    pthread_mutex_unlock(mutex)
                    return
                }
                pthread_cond_wait(condition, mutex)
            }
            let job = jobs[next]
            next += 1
            pthread_mutex_unlock(mutex)
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
