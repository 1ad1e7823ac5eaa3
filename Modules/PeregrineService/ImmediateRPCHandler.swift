import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Answers the small reads of `POST /jsonrpc` on the event loop that read them.
///
/// It sits in each plain HTTP connection's pipeline right after SwiftNIO's HTTP/1 decoder and
/// encoder, before the conversion to swift-http-types and Hummingbird's handler. A request that
/// is one call of `RPCDispatcher.immediateMethods` (`getGlobalStat`, `tellActive`,
/// `tellWaiting`, `tellStatus`, …) is answered here, from the dispatcher's synchronous path,
/// without the conversion of its head and answer (a tenth of the service's CPU under `wrk`),
/// the task, the async body stream and the router Hummingbird gives every request — about three
/// quarters of the instructions such a call took (`Benchmarks/instructions.sh`, P9). Everything
/// else goes on to Hummingbird unchanged: other methods, batches, other paths, a body that does
/// not parse or is too large, a browser's request from another origin (refused there), `Expect`,
/// `Connection: close` and HTTP/1.0 requests.
///
/// Answers keep their order: while a request it passed on is unanswered, every later request
/// of the connection is passed on too (HTTP/1.1 pipelining answers in order).
///
/// Hummingbird adds its extra handlers after the swift-http-types codec, so the service adds
/// ``Installer``, which puts this handler in front of the codec and leaves.
final class ImmediateRPCHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        /// Between requests.
        case idle
        /// Reading a request that may be answered here.
        case collecting(HTTPRequestHead, ByteBuffer)
        /// Passing the current request's parts on.
        case passing
    }

    private let dispatcher: RPCDispatcher
    private let maxRequestBytes: Int
    private let allowOriginAll: Bool
    private var state = State.idle
    /// Requests passed on whose answers have not ended yet.
    private var unanswered = 0

    /// Between requests, with every request passed on answered: an answer written now comes in
    /// its turn (``RawRPCHandler`` asks before it answers one itself).
    var isQuiet: Bool {
        guard case .idle = state else { return false }
        return unanswered == 0
    }

    init(dispatcher: RPCDispatcher, maxRequestBytes: Int, allowOriginAll: Bool) {
        self.dispatcher = dispatcher
        self.maxRequestBytes = maxRequestBytes
        self.allowOriginAll = allowOriginAll
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch (state, part) {
        case (.idle, .head(let request)):
            if unanswered == 0, mayAnswer(request) {
                state = .collecting(request, context.channel.allocator.buffer(capacity: 256))
            } else {
                passOn(.head(request), context: context)
                state = .passing
            }
        case (.collecting(let request, var body), .body(var chunk)):
            guard body.readableBytes + chunk.readableBytes <= maxRequestBytes else {
                // Hummingbird refuses it (413), with the same words as for any other request.
                passOn(.head(request), context: context)
                body.writeBuffer(&chunk)
                context.fireChannelRead(wrapInboundOut(.body(body)))
                state = .passing
                return
            }
            state = .idle  // drops the buffer's second reference before writing to it
            body.writeBuffer(&chunk)
            state = .collecting(request, body)
        case (.collecting(let request, let body), .end(let trailers)):
            state = .idle
            var answer: [UInt8] = []
            answer.reserveCapacity(512)
            if dispatcher.immediateResponse(to: body.readableBytesView, into: &answer) {
                respond(context.channel.allocator.buffer(bytes: answer), context: context)
            } else {
                passOn(.head(request), context: context)
                if body.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(body))) }
                context.fireChannelRead(wrapInboundOut(.end(trailers)))
            }
        case (.passing, .end):
            state = .idle
            context.fireChannelRead(data)
        default:
            // The rest of a request passed on (and anything out of order, which the handlers
            // after this one judge).
            context.fireChannelRead(data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), unanswered > 0 { unanswered -= 1 }
        context.write(data, promise: promise)
    }

    private func mayAnswer(_ request: HTTPRequestHead) -> Bool {
        guard request.method == .POST, request.uri == "/jsonrpc", request.version == .http1_1,
            request.isKeepAlive, !request.headers.contains(name: "expect")
        else { return false }
        // A browser's request from another origin is refused by the router's handler.
        return allowOriginAll || !request.headers.contains(name: "origin")
    }

    private func passOn(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        if case .head = part { unanswered += 1 }
        context.fireChannelRead(wrapInboundOut(part))
    }

    private func respond(_ body: ByteBuffer, context: ChannelHandlerContext) {
        var headers = allowOriginAll ? Self.headersAnyOrigin : Self.headers
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    private static let headers: HTTPHeaders = ["Content-Type": "application/json-rpc"]
    private static let headersAnyOrigin: HTTPHeaders = [
        "Content-Type": "application/json-rpc", "Access-Control-Allow-Origin": "*",
    ]

    /// Added where Hummingbird adds a connection's extra handlers (after the swift-http-types
    /// codec, once the first request is known not to be a WebSocket upgrade): puts its
    /// ``ImmediateRPCHandler`` in front of that codec, introduces it to the connection's
    /// ``RawRPCHandler``, then leaves the pipeline. Without the codec (no plain HTTP/1
    /// connection) it only leaves.
    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        // (A pipeline takes only inbound or outbound handlers; this one passes reads on.)
        typealias InboundIn = NIOAny

        private let handler: ImmediateRPCHandler

        init(_ handler: ImmediateRPCHandler) { self.handler = handler }

        func handlerAdded(context: ChannelHandlerContext) {
            let pipeline = context.pipeline.syncOperations
            if let codec = try? pipeline.handler(type: HTTP1ToHTTPServerCodec.self) {
                try? pipeline.addHandler(handler, position: .before(codec))
                if let raw = try? pipeline.handler(type: RawRPCHandler.self) { raw.next = handler }
            }
            pipeline.removeHandler(context: context, promise: nil)
        }
    }
}
