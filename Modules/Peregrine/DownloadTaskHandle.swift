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
/// Closures run on the manager's event task (not the caller's thread) in the order the events
/// happened; a `success` or `failure` closure added after the task ended is called at once with
/// the last outcome. The handle stays attached until the task is deleted; a task downloaded again
/// (restart, resume after a failure) calls the closures again.
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
    }

    /// The task's URL string.
    public let urlString: String
    private let state = Mutex(State())

    init(urlString: String) { self.urlString = urlString }

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
        case .finished(_, let path):
            let url = URL(fileURLWithPath: path)
            let handlers = state.withLock { state in
                state.outcome = .success(url)
                return state.success
            }
            for handler in handlers { handler(url) }
        case .failed(_, let reason):
            let handlers = state.withLock { state in
                state.outcome = .failure(reason)
                return state.failure
            }
            for handler in handlers { handler(reason) }
        case .started, .fileDeleted:
            state.withLock { $0.outcome = nil }
        default:
            break
        }
    }
}
