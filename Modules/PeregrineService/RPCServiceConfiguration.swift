import Peregrine

/// How an ``RPCService`` listens and what it allows.
public struct RPCServiceConfiguration: Sendable {
    /// The address to bind: `127.0.0.1` unless told otherwise (aria2's `--rpc-listen-all`
    /// binds `0.0.0.0`). On `127.0.0.1` the service listens on `[::1]` too, on the same port, as
    /// aria2 does (not where the machine has no IPv6 loopback).
    public var host: String
    /// The port; 0 picks a free one (see ``RPCService/listeningPort``).
    public var port: Int
    /// The secret clients give as `token:SECRET`; nil lets every local client in.
    public var secret: SecretToken?
    /// Whether browsers on other origins may call the service (aria2's `--rpc-allow-origin-all`):
    /// CORS headers on, foreign `Origin`s accepted. Off, a request with a foreign `Origin` is
    /// refused with 403 and no CORS header is sent.
    public var allowOriginAll: Bool
    /// Size bounds.
    public var limits: RPCLimits
    /// The version `aria2.getVersion` reports.
    public var version: String
    /// Whether unfinished downloads that no client paused start again when the service
    /// starts (aria2 continues its session's downloads).
    public var resumesUnfinishedDownloads: Bool
    /// Where `header` and `max-download-limit` go; give the same table to the manager's
    /// configuration as its `requestAdapter`.
    public var requestTable: TaskRequestTable?
    /// The queue this service shares with the other services of a fleet (issue 20), or nil for
    /// a service on its own. With one, `aria2.addUri` puts new downloads into that queue (only
    /// the `out` and `checksum` options; one URI; no position) instead of this service's
    /// manager, and `tellStatus` follows such a download through the queue until this service
    /// holds it. The queue's calls block for a round trip to its database.
    public var fleetQueue: (any ClaimingTaskQueue)?
    /// Called once the server listens, with its port (the daemon tells systemd it is ready).
    public var onListening: (@Sendable (Int) -> Void)?
    /// Called once when the shutdown begins (the daemon tells systemd it is stopping).
    public var onStopping: (@Sendable () -> Void)?

    /// Creates a configuration.
    public init(
        host: String = "127.0.0.1", port: Int = 6800, secret: SecretToken? = nil, allowOriginAll: Bool = false,
        limits: RPCLimits = RPCLimits(), version: String = "0.2.0", resumesUnfinishedDownloads: Bool = true,
        requestTable: TaskRequestTable? = nil, onListening: (@Sendable (Int) -> Void)? = nil,
        onStopping: (@Sendable () -> Void)? = nil
    ) {
        self.onStopping = onStopping
        self.host = host
        self.port = port
        self.secret = secret
        self.allowOriginAll = allowOriginAll
        self.limits = limits
        self.version = version
        self.resumesUnfinishedDownloads = resumesUnfinishedDownloads
        self.requestTable = requestTable
        self.onListening = onListening
    }
}
