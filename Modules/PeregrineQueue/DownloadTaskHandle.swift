import PeregrineCore
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A Tiercel-style handle on one task: chain closures for its progress, success and failure.
///
/// ```swift
/// manager.download("https://example.com/file.zip")?
///     .progress { print($0.fractionCompleted) }
///     .success { print("saved at \($0.path)") }
///     .failure { print("failed: \($0)") }
/// ```
///
/// Or await it: `let file = try await manager.download(url).value`.
///
/// Closures run outside every lock, on the thread that handed the task's events over or the
/// one at the queue's drain then — a transfer's, or an operation's caller right after its call.
/// One thread delivers events in the order they happened; two threads delivering events of the
/// same task at once (a progress report and the pause that stops it) may call the closures in
/// either order. The `AsyncStream` of ``DownloadQueueing/events()`` is another consumer, in order,
/// with no ordering between the two. A
/// `success` or `failure` closure added after the task ended is called at once with the last
/// outcome. The handle stays attached until the task is deleted; a task downloaded again
/// (restart, resume after a failure) calls the closures again. Stopping, trashing or deleting
/// the task calls no closure; it ends the awaits of ``value``.
public final class DownloadTaskHandle: Sendable {
    /// A progress report.
    public struct Progress: Sendable, Hashable {
        /// Bytes received so far.
        public var receivedBytes: Int64
        /// The file's size; -1 when unknown.
        public var expectedBytes: Int64
        /// `receivedBytes / expectedBytes` in 0…1; 0 when the size is unknown.
        public var fractionCompleted: Double {
            expectedBytes > 0 ? min(1, Double(receivedBytes) / Double(expectedBytes)) : 0
        }
    }

    private struct State {
        var progress: [@Sendable (Progress) -> Void] = []
        var success: [@Sendable (URL) -> Void] = []
        var failure: [@Sendable (FailureReason) -> Void] = []
        var outcome: Result<URL, FailureReason>?
        /// Why the task cannot end without the user (stopped, in the trash, deleted); cleared
        /// when it goes again.
        var halt: FailureReason?
        /// The reason an operation under way will end the waiting with (the trash), set before
        /// it stops the task: the stop's own event, which may reach the handle first from
        /// another thread, then leaves the waiting to it.
        var expectedHalt: FailureReason?
        var waiters: [UInt64: CheckedContinuation<Result<URL, FailureReason>, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// The task's URL string.
    public let urlString: String
    private let state = Locked(State())

    /// A handle; `outcome` is the task's when it has ended already (a finished or failed task
    /// from an earlier run), `halt` why it waits for the user (a stopped task).
    package init(urlString: String, outcome: Result<URL, FailureReason>? = nil, halt: FailureReason? = nil) {
        self.urlString = urlString
        state.withLock { state in
            state.outcome = outcome
            state.halt = halt
        }
    }

    /// The file's location once the task finishes — at once when it has — or why it will not
    /// without the user.
    ///
    /// The await always ends: with the file, with the task's failure, or — when the task is
    /// stopped, moved to the trash or deleted, before or while it is awaited — with a reason of
    /// code `.stopped`, `.inTrash` or `.deleted`. A paused task (connection kept) is still
    /// awaited. Cancelling the task that awaits stops the waiting with `.cancelled`, not the
    /// download: pause, stop or delete the task for that.
    ///
    /// - Throws: a `FailureReason`, so that a `switch` on its `code` needs no cast.
    public var value: URL {
        get async throws(FailureReason) {
            let id = state.withLock { state -> UInt64 in
                state.nextWaiter += 1
                return state.nextWaiter
            }
            let result = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let now = state.withLock { state -> Result<URL, FailureReason>? in
                        if let outcome = state.outcome { return outcome }
                        if let halt = state.halt { return .failure(halt) }
                        if Task.isCancelled { return .failure(Self.cancelled) }
                        state.waiters[id] = continuation
                        return nil
                    }
                    if let now { continuation.resume(returning: now) }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: .failure(Self.cancelled))
            }
            return try result.get()
        }
    }

    /// How many awaits of ``value`` are waiting now (for tests that end a task under an await).
    package var waiterCount: Int { state.withLock { $0.waiters.count } }

    private static let cancelled = FailureReason(.cancelled, message: "the waiting was cancelled")

    /// Ends the waiting of every await: the task will not end without the user. A task stopped
    /// on its way to the trash keeps the trash as its reason.
    package func halt(_ reason: FailureReason) {
        let waiters = state.withLock { state -> [CheckedContinuation<Result<URL, FailureReason>, Never>] in
            if reason.code == .stopped, let halt = state.halt ?? state.expectedHalt, halt.code != .stopped {
                return []
            }
            state.expectedHalt = nil
            state.halt = reason
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: .failure(reason)) }
    }

    /// The user resumed or restarted the task: an await waits for its new ending from now on,
    /// even while the transfer that the stop ended still drains (its `started` comes after).
    package func rearm() {
        state.withLock { state in
            state.outcome = nil
            state.halt = nil
            state.expectedHalt = nil
        }
    }

    /// Says that the operation under way ends the waiting with `reason` once it is done (see
    /// ``halt(_:)``), so that the stop it causes on the way does not end it first.
    package func expectHalt(_ reason: FailureReason) {
        state.withLock { $0.expectedHalt = reason }
    }

    /// Adds a closure called with each progress report (at most four a second).
    @discardableResult
    public func progress(_ handler: @escaping @Sendable (Progress) -> Void) -> DownloadTaskHandle {
        state.withLock { $0.progress.append(handler) }
        return self
    }

    /// Adds a closure called with the file's location when the task finishes.
    @discardableResult
    public func success(_ handler: @escaping @Sendable (URL) -> Void) -> DownloadTaskHandle {
        let past = state.withLock { state -> URL? in
            state.success.append(handler)
            if case .success(let url) = state.outcome { return url }
            return nil
        }
        if let past { handler(past) }
        return self
    }

    /// Adds a closure called with the reason when the task fails.
    @discardableResult
    public func failure(_ handler: @escaping @Sendable (FailureReason) -> Void) -> DownloadTaskHandle {
        let past = state.withLock { state -> FailureReason? in
            state.failure.append(handler)
            if case .failure(let reason) = state.outcome { return reason }
            return nil
        }
        if let past { handler(past) }
        return self
    }

    /// Passes an engine event of this task on to the closures.
    func deliver(_ event: EngineEvent) {
        switch event {
        case .progress(_, let received, let expected):
            let handlers = state.withLock { $0.progress }
            let report = Progress(receivedBytes: received, expectedBytes: expected ?? -1)
            for handler in handlers { handler(report) }
        case .finished(_, let url):
            let (handlers, waiters) = state.withLock { state in
                state.outcome = .success(url)
                defer { state.waiters = [:] }
                return (state.success, Array(state.waiters.values))
            }
            for waiter in waiters { waiter.resume(returning: .success(url)) }
            for handler in handlers { handler(url) }
        case .failed(_, let reason):
            let (handlers, waiters) = state.withLock { state in
                state.outcome = .failure(reason)
                defer { state.waiters = [:] }
                return (state.failure, Array(state.waiters.values))
            }
            for waiter in waiters { waiter.resume(returning: .failure(reason)) }
            for handler in handlers { handler(reason) }
        case .started, .fileDeleted, .waiting:
            state.withLock { state in
                state.outcome = nil
                state.halt = nil
            }
        case .stopped:
            halt(FailureReason(.stopped, message: "\(urlString) was stopped"))
        case .deleted:
            halt(FailureReason(.deleted, message: "\(urlString) was deleted"))
        default:
            break
        }
    }
}
