import Peregrine
import PeregrineCore
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a download's requests carry beyond the manager's defaults: the service's per-download
/// options (`header`, `user-agent`, `referer`, `max-download-limit`, `timeout`,
/// `connect-timeout`, `lowest-speed-limit`, `http-user`/`http-passwd`, `all-proxy`,
/// `check-certificate`, `ca-certificate`, `max-tries`, `retry-wait`).
public struct TaskRequestOptions: Sendable {
    /// Extra header fields, replacing fields of the same name.
    public var headers: [(String, String)] = []
    /// The transfer's own receive cap; nil for none.
    public var bytesPerSecond: Int64?
    /// Timeouts instead of the request's; nil to keep them.
    public var timeouts: TransferTimeouts?
    /// Basic credentials, sent to the download's own origin only (over plain http too, as the
    /// user asked for them for this download).
    public var credentials: RequestCredentials?
    /// The trust policy instead of the request's; nil to keep it.
    public var trust: TrustPolicy?
    /// The proxy (`http://[user:password@]host:port`); nil for the transport's.
    public var proxy: String?
    /// How failures are retried instead of the manager's policy; nil to keep it.
    public var retryPolicy: (any RetryPolicy)?

    /// Nothing beyond the defaults.
    public init() {}

    /// Whether it changes nothing.
    public var isEmpty: Bool {
        headers.isEmpty && bytesPerSecond == nil && timeouts == nil && credentials == nil && trust == nil
            && proxy == nil && retryPolicy == nil
    }
}

/// The per-download request options of the service (``TaskRequestOptions``) as a
/// `RequestAdapter` that applies them to every transfer of a task, and as the retry policy of
/// those that set `max-tries` or `retry-wait` (``retryPolicy(over:)``).
///
/// Give the same table to the manager's configuration (`requestAdapter`, and `retryPolicy`
/// through ``retryPolicy(over:)``) and to the ``RPCService``; without it in the manager, those
/// options are stored and reported but not applied. A change applies from the task's next
/// transfer. Thread-safe; ``adapt(_:for:)`` takes one lock and copies a small value.
public final class TaskRequestTable: RequestAdapter, Sendable {
    private let entries = Locked<[String: TaskRequestOptions]>([:])
    private let next: (any RequestAdapter)?

    /// Creates an empty table; `next` adapts requests after it (authentication, say).
    public init(next: (any RequestAdapter)? = nil) { self.next = next }

    /// Sets a task's extra headers and receive rate (nil or ≤ 0: unlimited), and nothing else.
    public func set(headers: [(String, String)], bytesPerSecond: Int64?, forTask urlString: String) {
        var options = TaskRequestOptions()
        options.headers = headers
        options.bytesPerSecond = bytesPerSecond.flatMap { $0 > 0 ? $0 : nil }
        set(options, forTask: urlString)
    }

    /// Sets what a task's requests carry.
    public func set(_ options: TaskRequestOptions, forTask urlString: String) {
        entries.withLock { entries in entries[urlString] = options.isEmpty ? nil : options }
    }

    /// Forgets a task.
    public func remove(task urlString: String) {
        _ = entries.withLock { $0.removeValue(forKey: urlString) }
    }

    public func adapt(_ request: inout TransferRequest, for task: TaskContext) {
        if let entry = entries.withLock({ $0[task.url.string] }) {
            for (name, value) in entry.headers { request.headers.replaceOrAdd(name: name, value: value) }
            if let rate = entry.bytesPerSecond { request.maxReceiveBytesPerSecond = rate }
            if let timeouts = entry.timeouts { request.timeouts = timeouts }
            if let credentials = entry.credentials { request.credentials = credentials }
            if let trust = entry.trust { request.trust = trust }
            if let proxy = entry.proxy { request.proxy = proxy }
        }
        next?.adapt(&request, for: task)
    }

    /// The retry policy of the manager that uses this table: a task's own (`max-tries`,
    /// `retry-wait`) where it has one, else `base`.
    public func retryPolicy(over base: (any RetryPolicy)?) -> any RetryPolicy {
        PerTaskRetryPolicy(table: self, base: base)
    }

    fileprivate func retryPolicy(ofTask urlString: String) -> (any RetryPolicy)? {
        entries.withLock { $0[urlString]?.retryPolicy }
    }
}

/// ``TaskRequestTable/retryPolicy(over:)``.
private struct PerTaskRetryPolicy: RetryPolicy {
    let table: TaskRequestTable
    let base: (any RetryPolicy)?

    func decision(after failure: TransferFailure, for task: TaskContext) -> RetryDecision {
        guard let policy = table.retryPolicy(ofTask: task.url.string) ?? base else { return .fail }
        return policy.decision(after: failure, for: task)
    }
}

extension TaskRequestOptions {
    /// The request options of aria2 option values (a download's over the service's global
    /// defaults). `max-tries` and `retry-wait` make a retry policy of the download's own, with
    /// the manager's rules for what is tried again (`BackoffRetryPolicy`).
    init(aria2 values: [String: String]) {
        self.init()
        var fields: [(String, String)] = []
        if let header = values["header"], !header.isEmpty {
            fields = DownloadOptions(["header": header]).headerFields
        }
        if let agent = values["user-agent"], !agent.isEmpty { fields.append(("User-Agent", agent)) }
        if let referer = values["referer"], !referer.isEmpty, referer != "*" { fields.append(("Referer", referer)) }
        headers = fields
        let timeout = values["timeout"].flatMap { Int64($0) }
        let connect = values["connect-timeout"].flatMap { Int64($0) }
        let lowest = values["lowest-speed-limit"].flatMap { Int64($0) } ?? 0
        if timeout != nil || connect != nil || lowest > 0 {
            let defaults = TransferTimeouts()
            // aria2's timeout: no byte for that long; its lowest speed: at most that many bytes a
            // second, judged over the same time.
            let window = timeout.map { Duration.seconds($0) } ?? defaults.lowSpeed?.duration ?? .seconds(60)
            timeouts = TransferTimeouts(
                connect: connect.map { .seconds($0) } ?? defaults.connect,
                lowSpeed: .init(bytesPerSecond: Int(max(lowest + (lowest > 0 ? 1 : 0), 1)), duration: window))
        }
        if let user = values["http-user"], !user.isEmpty {
            let token = Data("\(user):\(values["http-passwd"] ?? "")".utf8).base64EncodedString()
            credentials = RequestCredentials(authorization: "Basic " + token, allowPlainHTTP: true)
        }
        if values["check-certificate"] == "false" {
            trust = .insecure
        } else if let authority = values["ca-certificate"], !authority.isEmpty,
            authority != Aria2Option.catalogue["ca-certificate"]?.aria2Default
        {
            trust = .customCA(path: authority)
        }
        if let proxy = values["all-proxy"], !proxy.isEmpty, let url = DownloadOptions.proxyURL(proxy) {
            if let user = values["all-proxy-user"], !user.isEmpty, let schemeEnd = url.range(of: "://") {
                let password = values["all-proxy-passwd"] ?? ""
                let credentials = PercentEncoding.encoded(user) + ":" + PercentEncoding.encoded(password) + "@"
                self.proxy = url.replacingCharacters(in: schemeEnd.upperBound..<schemeEnd.upperBound, with: credentials)
            } else {
                self.proxy = url
            }
        }
        let tries = values["max-tries"].flatMap { Int($0) }
        let wait = values["retry-wait"].flatMap { Int64($0) } ?? 0
        if tries != nil || wait > 0 {
            // aria2: tries in all (0: no end), each after `retry-wait` seconds when it is set.
            let retries = tries.map { $0 == 0 ? Int(Int32.max) : max($0 - 1, 0) } ?? 4
            retryPolicy =
                wait > 0
                ? try? BackoffRetryPolicy(
                    maxRetries: retries, initialDelay: .seconds(wait), multiplier: 1, maxDelay: .seconds(wait),
                    jitter: 0)
                : try? BackoffRetryPolicy(maxRetries: retries)
        }
    }
}
