import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import TestSupport
import Testing

@testable import PeregrineService

/// What `RawRPCHandler` reads itself and what it leaves to SwiftNIO's HTTP/1 decoder: only a
/// request it frames without doubt, by one `Content-Length`, is answered in front of the
/// decoder; anything unusual goes to the decoder, which then frames everything after it.
@Suite struct RawRPCHandlerTests {
    private func framing(_ text: String, maxBody: Int = 1000, anyOrigin: Bool = false) -> RawRPCHandler.Framing {
        Array(text.utf8).withUnsafeBytes {
            RawRPCHandler.framing(of: $0, maxBodyBytes: maxBody, allowOriginAll: anyOrigin)
        }
    }

    private let line = "POST /jsonrpc HTTP/1.1\r\n"

    @Test func aStrictRequestIsFramedByItsContentLength() {
        let heads = [
            line + "Host: a\r\nContent-Length: 5\r\n\r\n",
            line + "content-length:5\r\n\r\n",
            line + "CONTENT-LENGTH: \t 5 \t\r\nConnection: keep-alive\r\nX-Any_Thing~1: v\u{80}lue\t(\"x\")\r\n\r\n",
            line + "Content-Length: 005\r\nConnection: Keep-Alive\r\nAccept: */*\r\nEmpty:\r\n\r\n",
        ]
        for head in heads {
            let whole = head + "hello"
            let expected = RawRPCHandler.Framing.request(headLength: head.utf8.count, bodyLength: 5)
            #expect(framing(whole) == expected, "\(head)")
            // The next request's first bytes do not change the framing of this one.
            #expect(framing(whole + "POST /json") == expected, "\(head)")
            // Every shorter prefix waits for more.
            let bytes = Array(whole.utf8)
            for count in 0..<bytes.count {
                let prefix = String(decoding: bytes[0..<count], as: UTF8.self)
                #expect(framing(prefix) == .incomplete, "\(count) bytes of \(head)")
            }
        }
        let empty = line + "Content-Length: 0\r\n\r\n"
        #expect(framing(empty) == .request(headLength: empty.utf8.count, bodyLength: 0))
        // An origin, when any is allowed; a body at the limit.
        let origin = line + "Origin: http://x\r\nContent-Length: 1000\r\n\r\n"
        #expect(
            framing(origin + String(repeating: "a", count: 1000), anyOrigin: true)
                == .request(headLength: origin.utf8.count, bodyLength: 1000))
    }

    @Test func whatIsNotReadStrictlyGoesToSwiftNIO() {
        let length = "Content-Length: 5\r\n"
        let refused = [
            // Another request line.
            "GET /jsonrpc HTTP/1.1\r\n" + length + "\r\nhello",
            "post /jsonrpc HTTP/1.1\r\n" + length + "\r\nhello",
            "POST /jsonrpc HTTP/1.0\r\n" + length + "\r\nhello",
            "POST /jsonrpc?x=1 HTTP/1.1\r\n" + length + "\r\nhello",
            "POST http://a/jsonrpc HTTP/1.1\r\n" + length + "\r\nhello",
            "POST  /jsonrpc HTTP/1.1\r\n" + length + "\r\nhello",
            "POST /jsonrpc HTTP/1.1\n" + length + "\r\nhello",
            "PUT",
            // Framing only SwiftNIO's decoder reads, or none.
            line + "\r\nhello",
            line + length + "Content-Length: 5\r\n\r\nhello",
            line + "Content-Length: +5\r\n\r\nhello",
            line + "Content-Length: 5 5\r\n\r\nhello",
            line + "Content-Length: 5,5\r\n\r\nhello",
            line + "Content-Length: 0x5\r\n\r\nhello",
            line + "Content-Length: 1001\r\n\r\n",
            line + "Content-Length: 1234567890\r\n\r\n",
            line + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            line + length + "Transfer-Encoding: identity\r\n\r\nhello",
            // What asks for more than an answer.
            line + length + "Expect: 100-continue\r\n\r\nhello",
            line + length + "Upgrade: websocket\r\n\r\nhello",
            line + length + "Connection: close\r\n\r\nhello",
            line + length + "Connection: keep-alive, Upgrade\r\n\r\nhello",
            line + length + "Origin: http://elsewhere\r\n\r\nhello",
            // Header lines that are not one token, a colon and a visible value.
            line + length + "Bad Name: x\r\n\r\nhello",
            line + length + "Name : x\r\n\r\nhello",
            line + length + ": x\r\n\r\nhello",
            line + length + "NoColon\r\n\r\nhello",
            line + length + "Folded: a\r\n b\r\n\r\nhello",
            line + length + "Bare: a\nb\r\n\r\nhello",
            line + length + "Bare: a\rb\r\n\r\nhello",
            line + length + "Nul: a\u{0}b\r\n\r\nhello",
            line + length + "Del: a\u{7f}b\r\n\r\nhello",
            line + length + "Control: a\u{1}b\r\n\r\nhello",
            line + length + "Ünicode: x\r\n\r\nhello",
        ]
        for text in refused {
            #expect(framing(text) == .elsewhere, "\(text.debugDescription)")
        }
        // A refusal is known as soon as its line has arrived, before the body.
        #expect(framing(line + "Transfer-Encoding: chunked\r\n") == .elsewhere)
        #expect(framing("GET ") == .elsewhere)
    }

    @Test func aHeadLongerThanTheLimitGoesToSwiftNIO() {
        let long = "X-Long: " + String(repeating: "a", count: RawRPCHandler.maxHeadBytes) + "\r\n"
        // Complete or not, a head past the limit is not held here.
        #expect(framing(line + "Content-Length: 5\r\n" + long + "\r\nhello") == .elsewhere)
        #expect(framing(line + "Content-Length: 5\r\n" + long) == .elsewhere)
        #expect(framing(line + "Content-Length: 5\r\nX-Long: " + String(repeating: "a", count: 9000)) == .elsewhere)
        // Just within it, it is read.
        let fits = line + "Content-Length: 5\r\nX: " + String(repeating: "a", count: 8100) + "\r\n\r\n"
        #expect(framing(fits + "hello") == .request(headLength: fits.utf8.count, bodyLength: 5))
    }
}

/// The handler's framing against SwiftNIO's own decoder: heads put together at random from
/// usual, unusual and malformed lines (seeded, `PEREGRINE_FRAMING_SEED`); wherever the handler
/// frames a request, SwiftNIO's decoder reads the same bytes as `POST /jsonrpc` HTTP/1.1 with a
/// body of exactly that length, and the next request starts where the handler says.
@Suite struct RawRPCHandlerAgreementTests {
    @Test func whatTheHandlerFramesSwiftNIOFramesTheSame() throws {
        let seed = SeededRandom.seeds(from: "PEREGRINE_FRAMING_SEED", defaults: [20261128])[0]
        print("framing agreement: seed \(seed)")
        var random = SeededRandom(seed: seed)
        let lines = [
            "Host: 127.0.0.1", "connection: keep-alive", "Connection: Keep-Alive ", "Accept: */*",
            "User-Agent: python-requests/2.31", "X-Tab:\tvalue\t", "Empty:", "Content-Type: application/json",
            "Content-Length: 2", "content-length: 02", "Content-Length: 3", "Transfer-Encoding: chunked",
            "Expect: 100-continue", "Origin: http://elsewhere", "Bad Name: x", " folded", "NoColon",
            "Connection: close", "Upgrade: websocket",
        ]
        let bodies = ["{}", "{} ", "[]x"]
        var framed = 0
        for round in 0..<2000 {
            var head = Bool.random(using: &random) ? "POST /jsonrpc HTTP/1.1\r\n" : "POST /jsonrpc HTTP/1.0\r\n"
            var fields = (0..<Int.random(in: 0...4, using: &random)).map { _ in lines.randomElement(using: &random)! }
            fields.insert(
                "Content-Length: \(Int.random(in: 2...3, using: &random))",
                at: Int.random(in: 0...fields.count, using: &random))
            for field in fields { head += field + "\r\n" }
            let body = bodies.randomElement(using: &random)!
            let text = head + "\r\n" + body + "GET / HTTP/1.1\r\n\r\n"
            let bytes = Array(text.utf8)
            let framing = bytes.withUnsafeBytes {
                RawRPCHandler.framing(of: $0, maxBodyBytes: 1000, allowOriginAll: false)
            }
            guard case .request(let headLength, let bodyLength) = framing else { continue }
            framed += 1
            // SwiftNIO's decoder on the same bytes.
            let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
            defer { _ = try? channel.finish() }
            // (The bytes after a body shorter than its Content-Length are no request: SwiftNIO's
            // error then comes after the first request's parts.)
            let failure = Result { try channel.writeInbound(ByteBuffer(bytes: bytes)) }
            var parts: [HTTPServerRequestPart] = []
            while let part = try channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
            guard case .head(let request) = parts.first else {
                Issue.record("round \(round): SwiftNIO read no head from \(text.debugDescription)")
                continue
            }
            #expect(request.method == .POST && request.uri == "/jsonrpc" && request.version == .http1_1)
            var received = 0
            var index = 1
            while index < parts.count, case .body(let chunk) = parts[index] {
                received += chunk.readableBytes
                index += 1
            }
            #expect(received == bodyLength, "round \(round): \(text.debugDescription)")
            #expect(index < parts.count && { if case .end = parts[index] { true } else { false } }())
            #expect(headLength == (head + "\r\n").utf8.count, "round \(round): \(text.debugDescription)")
            // With a body as long as its Content-Length, both read the GET after it.
            guard bodyLength == body.utf8.count else { continue }
            if index + 1 < parts.count, case .head(let next) = parts[index + 1] {
                #expect(next.method == .GET, "round \(round)")
            } else {
                Issue.record(
                    "round \(round): SwiftNIO read no second request from \(text.debugDescription): \(failure)")
            }
        }
        #expect(framed > 300, "seed \(seed): only \(framed) of 2000 heads framed")
    }
}

/// The handler on a channel of its own (`EmbeddedChannel`), for what a socket does not show on
/// demand: a connection that cannot take more answers.
@Suite struct RawRPCHandlerChannelTests {
    /// Counts the reads the handler lets through to the socket.
    private final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    /// While answers cannot go, requests are held and nothing more is read; once they can, the
    /// held requests are answered in order and reading resumes.
    @Test func aClientThatReadsNoAnswersIsNotReadFrom() async throws {
        try await ServiceRig.with { rig in
            let dispatcher = rig.service.dispatcher
            let next = ImmediateRPCHandler(dispatcher: dispatcher, maxRequestBytes: 1 << 20, allowOriginAll: false)
            let raw = RawRPCHandler(dispatcher: dispatcher, maxRequestBytes: 1 << 20, allowOriginAll: false)
            raw.next = next
            let counter = ReadCounter()
            let channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandlers([counter, raw])
            var requests = ""
            for id in 1...3 {
                let body = #"{"jsonrpc":"2.0","id":\#(id),"method":"aria2.getGlobalStat","params":["token:s3cret"]}"#
                requests += "POST /jsonrpc HTTP/1.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            }

            channel.isWritable = false
            try channel.writeInbound(ByteBuffer(string: requests))
            channel.read()
            #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "answered while nothing could go")
            #expect(counter.reads == 0, "read on while nothing could go")
            #expect(try channel.readInbound(as: ByteBuffer.self) == nil, "handed on")

            channel.isWritable = true
            channel.pipeline.fireChannelWritabilityChanged()
            var answers = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { answers += String(buffer: buffer) }
            let ids = answers.components(separatedBy: "\r\n\r\n").dropFirst().map { piece in
                let body = Data(piece.components(separatedBy: "HTTP/1.1 ")[0].utf8)
                return (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["id"] as? Int
            }
            #expect(ids == [1, 2, 3], "\(answers)")
            #expect(answers.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(counter.reads == 1, "the read held back was not made")
            _ = try channel.finish()
        }
    }
}
