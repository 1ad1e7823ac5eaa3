import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers the small reads of `POST /jsonrpc` on the event loop that read them.
///
/// It sits in each plain HTTP connection's pipeline, after the HTTP codec and before
/// Hummingbird's handler. A request that is one call of `RPCDispatcher.immediateMethods`
/// (`getGlobalStat`, `tellActive`, `tellWaiting`, `tellStatus`, …) is answered here, from the
/// dispatcher's synchronous path, without the task, the async body stream and the router
/// Hummingbird gives every request — about three quarters of the instructions such a call took
/// (`Benchmarks/instructions.sh`, P9). Everything else goes on to Hummingbird unchanged: other
/// methods, batches, other paths, a body that does not parse or is too large, a browser's
/// request from another origin (refused there), `Expect` and `Connection: close` requests.
///
/// Answers keep their order: while a request it passed on is unanswered, every later request
/// of the connection is passed on too (HTTP/1.1 pipelining answers in order).
final class ImmediateRPCHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        /// Between requests.
        case idle
        /// Reading a request that may be answered here.
        case collecting(HTTPRequest, ByteBuffer)
        /// Passing the current request's parts on.
        case passing
    }

    private let dispatcher: RPCDispatcher
    private let maxRequestBytes: Int
    private let allowOriginAll: Bool
    private var state = State.idle
    /// Requests passed on whose answers have not ended yet.
    private var unanswered = 0

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
            if let answer = dispatcher.immediateResponse(to: body.readableBytesView) {
                respond(answer, context: context)
            } else {
                passOn(.head(request), context: context)
                if body.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(body))) }
                context.fireChannelRead(wrapInboundOut(.end(trailers)))
            }
        case (.passing, .end):
            state = .idle
            context.fireChannelRead(data)
        default:
            // The rest of a request passed on (and anything out of order, which the codec
            // after this handler judges).
            context.fireChannelRead(data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), unanswered > 0 { unanswered -= 1 }
        context.write(data, promise: promise)
    }

    /// Whether the request can be answered here once its body is read.
    private func mayAnswer(_ request: HTTPRequest) -> Bool {
        guard request.method == .post, request.path == "/jsonrpc",
            request.headerFields[.expect] == nil,
            !(request.headerFields[.connection] ?? "").lowercased().contains("close")
        else { return false }
        // A browser's request from another origin is refused by the router's handler.
        return allowOriginAll || request.headerFields[.origin] == nil
    }

    private func passOn(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        if case .head = part { unanswered += 1 }
        context.fireChannelRead(wrapInboundOut(part))
    }

    /// The answer as the router's handler sends it: 200, `application/json-rpc`, CORS when
    /// every origin is allowed.
    private func respond(_ text: String, context: ChannelHandlerContext) {
        var body = context.channel.allocator.buffer(capacity: text.utf8.count)
        body.writeString(text)
        var fields = HTTPFields()
        fields[.contentType] = "application/json-rpc"
        fields[.contentLength] = String(body.readableBytes)
        if allowOriginAll { fields[.accessControlAllowOrigin] = "*" }
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
