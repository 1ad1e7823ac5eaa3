import Peregrine
import Synchronization

/// The per-download request options of the service — `header` and `max-download-limit` — as
/// a `RequestAdapter` that applies a task's extra headers and receive rate to every transfer
/// of it.
///
/// Give the same table to the manager's configuration (`requestAdapter`) and to the
/// ``RPCService``; without it in the manager, those options are stored and reported but not
/// applied. A change applies from the task's next transfer. Thread-safe; ``adapt(_:for:)``
/// takes one lock and copies a small value.
public final class TaskRequestTable: RequestAdapter, Sendable {
    private struct Entry: Sendable {
        var headers: [(String, String)] = []
        var bytesPerSecond: Int64?
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let next: (any RequestAdapter)?

    /// Creates an empty table; `next` adapts requests after it (authentication, say).
    public init(next: (any RequestAdapter)? = nil) { self.next = next }

    /// Sets a task's extra headers and receive rate (nil or ≤ 0: unlimited).
    public func set(headers: [(String, String)], bytesPerSecond: Int64?, forTask urlString: String) {
        let rate = bytesPerSecond.flatMap { $0 > 0 ? $0 : nil }
        entries.withLock { entries in
            entries[urlString] = headers.isEmpty && rate == nil ? nil : Entry(headers: headers, bytesPerSecond: rate)
        }
    }

    /// Forgets a task.
    public func remove(task urlString: String) {
        _ = entries.withLock { $0.removeValue(forKey: urlString) }
    }

    public func adapt(_ request: inout TransferRequest, for task: TaskContext) {
        if let entry = entries.withLock({ $0[task.url.string] }) {
            for (name, value) in entry.headers { request.headers.replaceOrAdd(name: name, value: value) }
            if let rate = entry.bytesPerSecond { request.maxReceiveBytesPerSecond = rate }
        }
        next?.adapt(&request, for: task)
    }
}
