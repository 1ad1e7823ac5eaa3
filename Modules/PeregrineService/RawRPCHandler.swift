import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import PeregrineCore

/// Answers the small reads of `POST /jsonrpc` from the connection's bytes, in front of
/// SwiftNIO's HTTP/1 decoder and encoder.
///
/// A request the handler reads strictly — `POST /jsonrpc HTTP/1.1`, header lines of token names
/// and visible values, exactly one `Content-Length` within the request limit, none of
/// `Transfer-Encoding`, `Expect`, `Upgrade`, a `Connection` other than `keep-alive`, or an
/// `Origin` (unless any origin is allowed) — whose body is one call of
/// `RPCDispatcher.immediateMethods` is answered here, with one write of the whole response:
/// none of the parsing into a request head and its headers, the three response parts and their
/// encoding that each request costs on SwiftNIO's way (about a third of the instructions a
/// `getGlobalStat` took there; Docs/Benchmarks.md, P9).
///
/// Anything else goes to SwiftNIO's decoder, unchanged and whole, so that the decoder always
/// starts at the start of a request:
/// - a complete request read strictly that is not such a call (an `addUri`, a batch, a body
///   that does not parse) is handed on alone, and the handler answers again once the service
///   has answered everything handed on (the ``ImmediateRPCHandler`` after the decoder says
///   when): answers keep the order of the requests;
/// - a request the handler does not read strictly (another method or path, another version, a
///   malformed or oversized head, chunked framing, a WebSocket upgrade) is handed on with every
///   byte after it, and the handler passes everything on from then on: what it cannot frame
///   itself, it never frames again.
///
/// The handler holds at most one request's bytes while they arrive (a head within
/// ``maxHeadBytes``, a body within the request limit). It answers only while the connection can
/// take more (`isWritable`): from a client that sends requests without reading the answers, it
/// holds the rest and stops reading until the answers have gone.
final class RawRPCHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = ByteBuffer

    /// The longest request head read here; a longer one goes to SwiftNIO's decoder.
    static let maxHeadBytes = 8192

    /// What the bytes at the start of a buffer are.
    enum Framing: Equatable {
        /// The start of a request that may be read here: more bytes are needed.
        case incomplete
        /// A request read strictly: its head and body lengths.
        case request(headLength: Int, bodyLength: Int)
        /// Not read here: SwiftNIO's decoder frames it, and everything after it.
        case elsewhere
    }

    private let dispatcher: RPCDispatcher
    /// The handler after SwiftNIO's decoder, once there is one (Hummingbird adds it when the
    /// first request is known not to be a WebSocket upgrade): until then, and whenever it is not
    /// quiet, requests are handed on.
    var next: ImmediateRPCHandler?
    private let maxRequestBytes: Int
    private let allowOriginAll: Bool
    /// Bytes read and not yet answered or handed on: the start of a request.
    private var held: ByteBuffer?
    /// Everything goes to the decoder from now on.
    private var passing = false
    /// A `read` asked for while answers could not be written; made once they can.
    private var readDeferred = false
    /// A request was handed on to SwiftNIO's decoder once.
    private var handedOnEver = false
    /// Bytes were handed on since the last end of a read: the handlers after this one hear of
    /// its end (a read answered here whole is none of their business, and telling them costs a
    /// pass through the pipeline).
    private var handedOn = false

    init(dispatcher: RPCDispatcher, maxRequestBytes: Int, allowOriginAll: Bool) {
        self.dispatcher = dispatcher
        self.maxRequestBytes = maxRequestBytes
        self.allowOriginAll = allowOriginAll
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !passing else {
            handedOn = true
            handedOnEver = true
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        if var held {
            self.held = nil
            held.writeBuffer(&bytes)
            bytes = held
        }
        answer(&bytes, context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard handedOn else { return }
        handedOn = false
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            if !passing, var held {
                self.held = nil
                answer(&held, context: context)
                if handedOn {
                    handedOn = false
                    context.fireChannelReadComplete()
                }
            }
            if readDeferred, context.channel.isWritable {
                readDeferred = false
                context.read()
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        // While the answers written cannot go, reading more requests would only grow what is
        // held or buffered. (Once everything is handed on, SwiftNIO's way has its own.)
        if !passing, !context.channel.isWritable {
            readDeferred = true
            return
        }
        context.read()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, servesNoRequest(context: context) {
            // A graceful shutdown, and no request of this connection is with the service:
            // nothing after this handler would close it.
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Whether no request of this connection is with the service: nothing arrived, or a request
    /// has not all arrived — held here, or read by SwiftNIO's decoder before the first request
    /// is known not to be a WebSocket upgrade (Hummingbird waits for that decision without end).
    private func servesNoRequest(context: ChannelHandlerContext) -> Bool {
        if let next { return !passing && held != nil && next.isQuiet }
        if !passing { return !handedOnEver }
        let upgrade = try? context.pipeline.syncOperations.handler(
            type: NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>.self)
        return upgrade != nil
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if let held, held.readableBytes > 0 {
            self.held = nil
            context.fireChannelRead(wrapInboundOut(held))
            context.fireChannelReadComplete()
        }
    }

    /// Answers the requests at the start of `bytes` while it can; holds an incomplete one (or
    /// any, while the connection cannot take answers); hands the rest on.
    private func answer(_ bytes: inout ByteBuffer, context: ChannelHandlerContext) {
        var answered = false
        defer { if answered { context.flush() } }
        while bytes.readableBytes > 0 {
            guard context.channel.isWritable else {
                held = bytes
                return
            }
            let framing = bytes.withUnsafeReadableBytes {
                Self.framing(of: $0, maxBodyBytes: maxRequestBytes, allowOriginAll: allowOriginAll)
            }
            switch framing {
            case .incomplete:
                held = bytes
                return
            case .elsewhere:
                passing = true
                handedOn = true
                handedOnEver = true
                context.fireChannelRead(wrapInboundOut(bytes))
                return
            case .request(let headLength, let bodyLength):
                let length = headLength + bodyLength
                var output: [UInt8] = []
                output.reserveCapacity(512)
                if let next, next.isQuiet,
                    dispatcher.immediateResponse(
                        to: bytes.readableBytesView.dropFirst(headLength).prefix(bodyLength), into: &output)
                {
                    context.write(wrapOutboundOut(response(output, allocator: context.channel.allocator)), promise: nil)
                    answered = true
                    bytes.moveReaderIndex(forwardBy: length)
                } else {
                    // Handed on alone; once the service has answered it (and all before it),
                    // the next one may be answered here.
                    handedOn = true
                    handedOnEver = true
                    context.fireChannelRead(wrapInboundOut(bytes.readSlice(length: length)!))
                }
            }
        }
    }

    private func response(_ body: [UInt8], allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: body.count + 128)
        buffer.writeStaticString("HTTP/1.1 200 OK\r\nContent-Type: application/json-rpc\r\n")
        if allowOriginAll { buffer.writeStaticString("Access-Control-Allow-Origin: *\r\n") }
        buffer.writeStaticString("Content-Length: ")
        buffer.writeString(String(body.count))
        buffer.writeStaticString("\r\n\r\n")
        buffer.writeBytes(body)
        return buffer
    }

    // MARK: Reading a request strictly

    private static let requestLine = Array("POST /jsonrpc HTTP/1.1\r\n".utf8)

    /// Frames the request at the start of `bytes` (see ``Framing``).
    static func framing(of bytes: UnsafeRawBufferPointer, maxBodyBytes: Int, allowOriginAll: Bool) -> Framing {
        let line = requestLine
        guard bytes.count >= line.count else {
            return bytes.elementsEqual(line.prefix(bytes.count)) ? .incomplete : .elsewhere
        }
        guard bytes.prefix(line.count).elementsEqual(line) else { return .elsewhere }
        var position = line.count
        var contentLength: Int?
        while true {
            // One header line, up to its CR LF.
            let end: Int
            switch lineEnd(in: bytes, from: position) {
            case .at(let index): end = index
            case .notYet: return bytes.count > maxHeadBytes ? .elsewhere : .incomplete
            case .malformed: return .elsewhere
            }
            guard end <= maxHeadBytes else { return .elsewhere }
            if end == position {
                // The empty line: the head ends.
                let headLength = end + 2
                guard let contentLength else { return .elsewhere }
                return bytes.count - headLength >= contentLength
                    ? .request(headLength: headLength, bodyLength: contentLength) : .incomplete
            }
            guard let field = Field(bytes, from: position, to: end) else { return .elsewhere }
            switch field.name {
            case .contentLength:
                guard contentLength == nil, let length = field.decimalValue(in: bytes), length <= maxBodyBytes else {
                    return .elsewhere
                }
                contentLength = length
            case .connection:
                guard field.valueEquals("keep-alive", in: bytes) else { return .elsewhere }
            case .origin:
                guard allowOriginAll else { return .elsewhere }
            case .refused:
                return .elsewhere
            case .other:
                break
            }
            position = end + 2
        }
    }

    private enum LineEnd {
        /// The index of the line's CR.
        case at(Int)
        /// No CR LF yet.
        case notYet
        /// A CR without LF, or an LF without CR.
        case malformed
    }

    /// Where the line that starts at `start` ends.
    private static func lineEnd(in bytes: UnsafeRawBufferPointer, from start: Int) -> LineEnd {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\r"):
                guard index + 1 < bytes.count else { return .notYet }
                return bytes[index + 1] == UInt8(ascii: "\n") ? .at(index) : .malformed
            case UInt8(ascii: "\n"): return .malformed
            default: index += 1
            }
        }
        return .notYet
    }

    /// A header line `name: value`, read strictly: the name one token, the value visible
    /// characters, spaces and tabs (obsolete line folding, a lone CR or LF, or any other control
    /// character make it unreadable here).
    private struct Field {
        enum Name { case contentLength, connection, origin, refused, other }

        let name: Name
        /// The value without the spaces and tabs around it.
        let value: Range<Int>

        init?(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) {
            var colon = start
            while colon < end, HTTPToken.isTokenByte(bytes[colon]) { colon += 1 }
            guard colon > start, colon < end, bytes[colon] == UInt8(ascii: ":") else { return nil }
            var valueStart = colon + 1
            var valueEnd = end
            while valueStart < valueEnd, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            for index in valueStart..<valueEnd {
                let byte = bytes[index]
                guard byte >= 0x20 || byte == 0x09, byte != 0x7F else { return nil }
            }
            value = valueStart..<valueEnd
            let name = UnsafeRawBufferPointer(rebasing: bytes[start..<colon])
            if Self.equalsIgnoringCase(name, "content-length") {
                self.name = .contentLength
            } else if Self.equalsIgnoringCase(name, "connection") {
                self.name = .connection
            } else if Self.equalsIgnoringCase(name, "origin") {
                self.name = .origin
            } else if Self.equalsIgnoringCase(name, "transfer-encoding") || Self.equalsIgnoringCase(name, "expect")
                || Self.equalsIgnoringCase(name, "upgrade")
            {
                self.name = .refused
            } else {
                self.name = .other
            }
        }

        /// The value as a decimal number of at most nine digits (nil for anything else).
        func decimalValue(in bytes: UnsafeRawBufferPointer) -> Int? {
            guard !value.isEmpty, value.count <= 9 else { return nil }
            var number = 0
            for index in value {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                number = number * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return number
        }

        func valueEquals(_ text: StaticString, in bytes: UnsafeRawBufferPointer) -> Bool {
            Self.equalsIgnoringCase(UnsafeRawBufferPointer(rebasing: bytes[value]), text)
        }

        /// ASCII case-insensitive; `text` is lower case.
        private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
            guard bytes.count == text.utf8CodeUnitCount else { return false }
            let expected = text.utf8Start
            for index in 0..<bytes.count {
                var byte = bytes[index]
                if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { byte += 0x20 }
                guard byte == expected[index] else { return false }
            }
            return true
        }
    }
}

/// A connection of the service: Hummingbird's HTTP/1 with the WebSocket upgrade, behind a
/// ``RawRPCHandler`` put in front of everything Hummingbird adds, so that it reads every byte
/// from the first (Hummingbird adds its own extra handlers only after the first request).
struct RawRPCChildChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let base: HTTP1WebSocketUpgradeChannel
    let dispatcher: RPCDispatcher
    let maxRequestBytes: Int
    let allowOriginAll: Bool

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(
                RawRPCHandler(dispatcher: dispatcher, maxRequestBytes: maxRequestBytes, allowOriginAll: allowOriginAll))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
