/// Bounds on what one client can ask of the service, so that no request can exhaust it.
public struct RPCLimits: Sendable, Hashable {
    /// The largest request body (HTTP) or message (WebSocket), in bytes; aria2's
    /// `--rpc-max-request-size` defaults to 2 MiB too.
    public var maxRequestBytes: Int
    /// The most calls in one batch or `system.multicall`.
    public var maxBatchCount: Int
    /// The most URIs in one `addUri`.
    public var maxURIsPerDownload: Int
    /// The most WebSocket clients at once; more are refused at the upgrade.
    public var maxWebSocketClients: Int
    /// The backlog of one WebSocket client, in bytes: its socket's send buffer, and how much
    /// the service queues for it past that before the notifications sent meanwhile are dropped
    /// for it (answers to its calls wait instead). A slow client loses notifications, never
    /// slows the others.
    public var notificationBacklogBytes: Int

    /// The largest WebSocket message read: twice ``maxRequestBytes``, so that a message a little
    /// over the bound gets the size error as an answer; a larger one closes the connection with
    /// WebSocket's "message too big".
    var webSocketReadBytes: Int {
        maxRequestBytes.multipliedReportingOverflow(by: 2).overflow ? .max : maxRequestBytes * 2
    }

    /// Creates limits.
    public init(
        maxRequestBytes: Int = 2 << 20, maxBatchCount: Int = 1000, maxURIsPerDownload: Int = 16,
        maxWebSocketClients: Int = 1024, notificationBacklogBytes: Int = 256 << 10
    ) {
        self.maxRequestBytes = maxRequestBytes
        self.maxBatchCount = maxBatchCount
        self.maxURIsPerDownload = maxURIsPerDownload
        self.maxWebSocketClients = maxWebSocketClients
        self.notificationBacklogBytes = notificationBacklogBytes
    }
}
