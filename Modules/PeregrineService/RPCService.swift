import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import Peregrine
import PeregrineCore
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The download service: aria2-compatible JSON-RPC at `/jsonrpc`, over HTTP POST and over
/// WebSocket on the same port, on a `DownloadManager` the application already has.
///
/// A `Service` (swift-service-lifecycle): run it in a `ServiceGroup` beside the application's
/// other services, or on its own. It runs until the group shuts it down gracefully (SIGTERM)
/// or a client calls `aria2.shutdown`; then it closes the WebSocket clients, stops the HTTP
/// server, stops every transfer with its resume record and saves the store.
///
/// ```swift
/// let requests = TaskRequestTable()
/// let manager = try DownloadManager(identifier: "daemon", configuration: .init(requestAdapter: requests, …))
/// let service = RPCService(manager: manager, configuration: .init(port: 6800, requestTable: requests))
/// try await ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm], logger: logger).run()
/// ```
public final class RPCService: Service, Sendable {
    /// The method handler, usable without sockets.
    public let dispatcher: RPCDispatcher
    private let configuration: RPCServiceConfiguration
    private let logger: Logger
    private let hub: NotificationHub
    private let port = Locked<Int?>(nil)
    private let shutdown = Locked<(requested: Bool, trigger: (@Sendable () -> Void)?)>((false, nil))

    /// Creates the service on `manager`; nothing listens until ``run()``.
    public init(manager: DownloadManager, configuration: RPCServiceConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.hub = NotificationHub()
        self.dispatcher = RPCDispatcher(manager: manager, configuration: configuration, logger: logger, hub: hub)
        dispatcher.shutdownRequest.withLock { $0 = { [weak self] in self?.requestShutdown() } }
    }

    /// The port the server listens on, once it does.
    public var listeningPort: Int? { port.withLock { $0 } }

    /// Stops the service as `aria2.shutdown` does; ``run()`` returns once it is done.
    public func requestShutdown() {
        let trigger = shutdown.withLock { state in
            state.requested = true
            return state.trigger
        }
        trigger?()
    }

    /// Serves until a graceful shutdown or ``requestShutdown()``, then stops the transfers and
    /// saves the store.
    public func run() async throws {
        let dispatcher = self.dispatcher
        let limits = configuration.limits
        let allowOriginAll = configuration.allowOriginAll
        let shouldUpgrade = webSocketUpgrade()
        let responder = makeRouter().buildResponder()
        @Sendable func application(
            _ address: BindAddress, onRunning: @escaping @Sendable (any Channel) async -> Void
        ) -> Application<RouterResponder<BasicRequestContext>> {
            Application(
                responder: responder,
                // Small reads answered on the event loop (RawRPCHandler in front of SwiftNIO's
                // HTTP/1 decoder, ImmediateRPCHandler after it); the rest goes to the router.
                server: HTTPServerBuilder { responder in
                    RawRPCChildChannel(
                        base: HTTP1WebSocketUpgradeChannel(
                            responder: responder,
                            configuration: .init(
                                http1: .init(additionalChannelHandlers: [
                                    ImmediateRPCHandler.Installer(
                                        ImmediateRPCHandler(
                                            dispatcher: dispatcher, maxRequestBytes: limits.maxRequestBytes,
                                            allowOriginAll: allowOriginAll))
                                ]),
                                ws: .init(maxFrameSize: limits.webSocketReadBytes)),
                            shouldUpgrade: shouldUpgrade),
                        dispatcher: dispatcher, maxRequestBytes: limits.maxRequestBytes, allowOriginAll: allowOriginAll
                    )
                },
                configuration: ApplicationConfiguration(address: address, serverName: nil),
                onServerRunning: onRunning,
                logger: logger)
        }
        // As aria2, a service on the IPv4 loopback listens on the IPv6 one too, on the same port
        // (known once the first is up when it was 0).
        let (boundPorts, boundPort) = AsyncStream<Int>.makeStream()
        let primary = application(.hostname(configuration.host, port: configuration.port)) { [self] channel in
            let bound = channel.localAddress?.port ?? configuration.port
            port.withLock { $0 = bound }
            dispatcher.listeningPort.withLock { $0 = bound }
            logger.info("listening", metadata: ["address": "\(configuration.host):\(bound)"])
            boundPort.yield(bound)
            boundPort.finish()
            configuration.onListening?(bound)
        }
        var loopbackV6: IPv6LoopbackListener?
        if configuration.host == "127.0.0.1" {
            let logger = self.logger
            loopbackV6 = IPv6LoopbackListener(ports: boundPorts, logger: logger) { port in
                application(.hostname("::1", port: port)) { _ in
                    logger.info("listening", metadata: ["address": "[::1]:\(port)"])
                }
            }
        }
        // One service for both listeners, so that a shutdown reaches them at once: one after the
        // other, the second could be cancelled mid-shutdown by the bound below, and Hummingbird
        // then logs an error for a socket closed twice.
        var groupConfiguration = ServiceGroupConfiguration(
            services: [.init(service: Listeners(primary: primary, loopbackV6: loopbackV6))], logger: logger)
        // A client that stalls mid-request cannot hold the shutdown: after a second the server
        // is cancelled, so the transfers are stopped and the store saved within the two seconds
        // issue 17 allows. (No maximumCancellationDuration: exceeding it is a fatalError in
        // swift-service-lifecycle, and a loaded machine can exceed any small bound.)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(1)
        let group = ServiceGroup(configuration: groupConfiguration)
        let hub = self.hub
        let onStopping = configuration.onStopping
        let trigger: @Sendable () -> Void = {
            // Called by a signal, a client or both: the hub closes once, the hook runs once.
            if hub.close() { onStopping?() }
            Task { await group.triggerGracefulShutdown() }
        }
        let alreadyRequested = shutdown.withLock { state in
            state.trigger = trigger
            return state.requested
        }
        if alreadyRequested { trigger() }

        if configuration.resumesUnfinishedDownloads { dispatcher.resumeUnfinished() }
        let events = dispatcher.manager.events()
        let follower = Task { [dispatcher] in await dispatcher.followEvents(events) }
        defer { follower.cancel() }
        let listChanges = dispatcher.manager.events()
        let listFollower = Task { [dispatcher] in await dispatcher.followListChanges(listChanges) }
        defer { listFollower.cancel() }
        // In a fleet, what the other services finish reaches this service's clients too (read
        // from the database on a thread of its own: not the cooperative pool's, and not one its
        // clients' calls wait for while the database is away).
        let fleetFollower = configuration.fleetQueue.map { queue in
            let executor = BlockingCallExecutor(threads: 1)
            return Task(executorPreference: executor) { [dispatcher] in
                await dispatcher.followFleet(queue)
                executor.stopWhenIdle()
            }
        }
        defer { fleetFollower?.cancel() }
        do {
            try await withGracefulShutdownHandler {
                try await group.run()
            } onGracefulShutdown: {
                trigger()
            }
        } catch {
            // The server failed (a port in use, say): the downloads stop and are saved all the same.
            await finish()
            throw error
        }
        await finish()
    }

    /// Stops every transfer, waits until each has synced its partial file and moved its resume
    /// record to the bytes on disk (a restart resumes from there), and saves the store.
    private func finish() async {
        let manager = dispatcher.manager
        for list in manager.lists { manager.stopAllTasks(in: list) }
        if !(await manager.engine.waitUntilTransfersDrain(atMost: Self.drainLimit)) {
            logger.warning("transfers still running after \(Self.drainLimit); their last checkpoints are kept")
        }
        do {
            try manager.saveData()
        } catch {
            logger.error("saving the store failed", metadata: ["error": "\(error)"])
        }
        logger.info("stopped")
    }

    /// How long a stop waits for the transfers to sync their files.
    static let drainLimit: Duration = .seconds(10)

    // MARK: Routes

    /// The router of plain HTTP requests: `POST /jsonrpc`, its CORS preflight, thumbnails, the
    /// dashboard's files.
    private func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        let dispatcher = self.dispatcher
        let configuration = self.configuration
        router.post("/jsonrpc") { request, _ -> Response in
            if let refusal = Self.refuseForeignOrigin(request.head, configuration) { return refusal }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: configuration.limits.maxRequestBytes)
            } catch {
                return Self.json(
                    RPCCodec.response(
                        id: .null, .failure(RPCError(code: -32600, "Invalid Request. The request is too large."))
                    )
                    .serialized, status: .contentTooLarge, configuration)
            }
            let ((answer, status), followUps) = await AnswerFollowUps.collect {
                await dispatcher.respondWithStatus(to: body.readableBytesView)
            }
            return Self.json(answer, status: HTTPResponse.Status(code: status), configuration, then: followUps)
        }
        // For operators: the process is up; it can work (store, fleet queue); what it did.
        router.get("/healthz") { request, _ -> Response in
            if let refusal = Self.refuseForeignOrigin(request.head, configuration) { return refusal }
            return Self.plain("ok\n", status: .ok)
        }
        router.get("/readyz") { request, _ -> Response in
            if let refusal = Self.refuseForeignOrigin(request.head, configuration) { return refusal }
            if let reason = await dispatcher.unreadiness() {
                return Self.plain("not ready: \(reason)\n", status: .serviceUnavailable)
            }
            return Self.plain("ready\n", status: .ok)
        }
        router.get("/metrics") { request, _ -> Response in
            if let refusal = Self.refuseForeignOrigin(request.head, configuration) { return refusal }
            return Self.plain(
                await dispatcher.metricsText(), status: .ok, type: "text/plain; version=0.0.4; charset=utf-8")
        }
        router.on("/jsonrpc", method: .options) { request, _ -> Response in
            guard configuration.allowOriginAll else { return Response(status: .forbidden) }
            var headers = HTTPFields()
            headers[.accessControlAllowOrigin] = "*"
            headers[.accessControlAllowMethods] = "POST, GET, OPTIONS"
            headers[.accessControlAllowHeaders] = "Content-Type"
            headers[.accessControlMaxAge] = "1728000"
            return Response(status: .ok, headers: headers)
        }
        // GET /thumbnail/GID?height=N[&token=SECRET]: the download's thumbnail (PNG, or the
        // cache's format), or its file type's icon.
        router.get("/thumbnail/:gid") { request, context -> Response in
            if let refusal = Self.refuseForeignOrigin(request.head, configuration) { return refusal }
            if let secret = configuration.secret {
                // The dashboard sends the token in a header: a URL would show it in logs.
                guard let token = request.uri.queryParameters.get("token") ?? Self.bearerToken(request),
                    secret.matches(token)
                else {
                    return Response(status: .unauthorized)
                }
            }
            let height = min(1024, max(16, request.uri.queryParameters.get("height", as: Int.self) ?? 128))
            guard let gid = context.parameters.get("gid"),
                let thumbnail = try? await dispatcher.thumbnail(gid: gid, height: height)
            else { return Response(status: .notFound) }
            var headers = HTTPFields()
            headers[.contentType] = thumbnail.format == .jpeg ? "image/jpeg" : "image/png"
            headers[.cacheControl] = "no-store"
            if configuration.allowOriginAll { headers[.accessControlAllowOrigin] = "*" }
            return Response(
                status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: thumbnail.data)))
        }
        addDashboardRoutes(to: router, logger: logger)
        return router
    }

    /// Upgrades `/jsonrpc` to WebSocket (on the connection's event loop): the client's calls are
    /// answered in order, and the hub writes it the notifications.
    private func webSocketUpgrade()
        -> @Sendable (HTTPRequest, any Channel, Logger) throws -> ShouldUpgradeResult<
            WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
        >
    {
        let dispatcher = self.dispatcher
        let configuration = self.configuration
        let limits = configuration.limits
        let hub = self.hub
        return { request, channel, _ in
            let path = request.path?.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first
            guard path == "/jsonrpc", Self.refuseForeignOrigin(request, configuration) == nil else {
                return .dontUpgrade
            }
            // The backlog past which notifications are dropped for this client (see
            // NotificationHub), in the service and in the kernel: a socket's send buffer would
            // otherwise grow to tcp_wmem's maximum (4 MiB) for a client that reads nothing.
            let backlog = max(1, limits.notificationBacklogBytes)
            if let options = channel.syncOptions {
                try options.setOption(
                    ChannelOptions.writeBufferWaterMark, value: .init(low: backlog / 2, high: backlog))
                try options.setOption(
                    ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(min(backlog, 1 << 30)))
            }
            return .upgrade([:]) { inbound, outbound, _ in
                guard let (subscriber, closing) = hub.subscribe(channel, limit: limits.maxWebSocketClients) else {
                    try await outbound.close(.goingAway, reason: "too many clients")
                    return
                }
                defer { hub.unsubscribe(subscriber) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        // A message over the request bound is read (up to twice it) and answered
                        // with the size error, as an HTTP body is; past that the connection is
                        // closed with "message too big".
                        for try await message in inbound.messages(maxSize: limits.webSocketReadBytes) {
                            let bytes: [UInt8]
                            switch message {
                            case .text(let text): bytes = Array(text.utf8)
                            case .binary(let buffer): bytes = Array(buffer.readableBytesView)
                            }
                            let (answer, followUps) = await AnswerFollowUps.collect {
                                await dispatcher.respond(to: bytes)
                            }
                            try await outbound.writeTextMessage(answer)
                            followUps?.run()
                        }
                    }
                    group.addTask {
                        for await _ in closing {}
                    }
                    // Either the client left or the service closes: end both.
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }

    /// A JSON-RPC answer, with CORS headers when every origin is allowed; `followUps` run once
    /// it is written.
    private static func json(
        _ text: String, status: HTTPResponse.Status, _ configuration: RPCServiceConfiguration,
        then followUps: AnswerFollowUps? = nil
    ) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json-rpc"
        if configuration.allowOriginAll { headers[.accessControlAllowOrigin] = "*" }
        let buffer = ByteBuffer(string: text)
        guard let followUps else {
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: buffer))
        }
        let body = ResponseBody(contentLength: buffer.readableBytes) { writer in
            try await writer.write(buffer)
            try await writer.finish(nil)
            followUps.run()
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// A plain-text answer.
    private static func plain(_ text: String, status: HTTPResponse.Status, type: String = "text/plain; charset=utf-8")
        -> Response
    {
        var headers = HTTPFields()
        headers[.contentType] = type
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// 403 for a request a browser sent from another origin, unless every origin is allowed;
    /// and, without a secret, for a request to a host name other than `localhost`: a domain
    /// that an attacker points at this machine (DNS rebinding) makes its page's origin match its
    /// Host, so only an address or `localhost` proves the page is this service's own.
    private static func refuseForeignOrigin(_ request: HTTPRequest, _ configuration: RPCServiceConfiguration)
        -> Response?
    {
        if configuration.secret == nil, let authority = request.authority, !isAddressOrLocalhost(authority) {
            return Response(status: .forbidden)
        }
        guard !configuration.allowOriginAll, let origin = request.headerFields[.origin] else { return nil }
        let host = request.authority ?? ""
        let originHost = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(
            String.init)
        if originHost == host { return nil }
        return Response(status: .forbidden)
    }

    /// Whether a Host header names an IP address (`127.0.0.1:6800`, `[::1]:6800`) or
    /// `localhost`, which no DNS answer can take over.
    static func isAddressOrLocalhost(_ authority: String) -> Bool {
        if authority.hasPrefix("[") { return authority.contains("]") }
        let host = authority.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        if host.lowercased() == "localhost" || host.lowercased() == "localhost." { return true }
        var address = in_addr()
        return inet_pton(AF_INET, host, &address) == 1
    }
}

/// The service's listeners: the primary one, and the `[::1]` one beside it when there is one.
/// The primary's end (a shutdown, or a failure such as a port in use) is the service's.
private struct Listeners: Service {
    let primary: Application<RouterResponder<BasicRequestContext>>
    let loopbackV6: IPv6LoopbackListener?

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            if let loopbackV6 { group.addTask { await loopbackV6.run() } }
            // A failure leaves the body, which cancels the other listener.
            try await primary.run()
        }
    }
}

/// The service's listener on `[::1]`, started on the port of the IPv4 one once that is up. A
/// machine without IPv6 serves on IPv4 alone.
private struct IPv6LoopbackListener: Sendable {
    let ports: AsyncStream<Int>
    let logger: Logger
    let make: @Sendable (Int) -> Application<RouterResponder<BasicRequestContext>>

    init(
        ports: AsyncStream<Int>, logger: Logger,
        _ make: @escaping @Sendable (Int) -> Application<RouterResponder<BasicRequestContext>>
    ) {
        self.ports = ports
        self.logger = logger
        self.make = make
    }

    func run() async {
        for await port in ports.cancelOnGracefulShutdown() {
            do {
                try await make(port).run()
            } catch {
                logger.notice("not listening on [::1]", metadata: ["port": "\(port)", "error": "\(error)"])
            }
            return
        }
    }
}
