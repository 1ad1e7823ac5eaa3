import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import PeregrineService

/// The hub writes each notification on its clients' event loops, drops it for a client whose
/// connection is backed up, and writes nothing to a client once it has left or the hub closed.
@Suite struct NotificationHubTests {
    /// The text messages written to `channel` so far.
    private func written(_ channel: EmbeddedChannel) throws -> [String] {
        var texts: [String] = []
        while let frame = try channel.readOutbound(as: WebSocketFrame.self) {
            #expect(frame.fin && frame.opcode == .text && frame.maskKey == nil)
            texts.append(String(buffer: frame.data))
        }
        return texts
    }

    @Test func aBackedUpClientLosesNotificationsAndSlowsNoOther() throws {
        let hub = NotificationHub()
        // Two clients on one loop and one on another.
        let loop = EmbeddedEventLoop()
        let other = EmbeddedEventLoop()
        let fast = EmbeddedChannel(loop: loop)
        let slow = EmbeddedChannel(loop: loop)
        let far = EmbeddedChannel(loop: other)
        for channel in [fast, slow, far] { #expect(hub.subscribe(channel, limit: 3) != nil) }
        #expect(hub.subscribe(EmbeddedChannel(loop: loop), limit: 3) == nil, "a fourth client over the limit")

        hub.broadcast("one")
        #expect(try written(fast).isEmpty, "written off the client's event loop")
        loop.run()
        other.run()
        slow.isWritable = false
        hub.broadcast("two")
        loop.run()
        other.run()
        slow.isWritable = true
        hub.broadcast("three")
        loop.run()
        other.run()

        #expect(try written(fast) == ["one", "two", "three"])
        #expect(try written(far) == ["one", "two", "three"])
        #expect(try written(slow) == ["one", "three"], "what came while it was backed up was not dropped")
        for channel in [fast, slow, far] { _ = try channel.finish() }
    }

    @Test func nothingIsWrittenToAClientThatLeftOrOnceTheHubClosed() async throws {
        let hub = NotificationHub()
        let loop = EmbeddedEventLoop()
        let leaving = EmbeddedChannel(loop: loop)
        let staying = EmbeddedChannel(loop: loop)
        let (gone, _) = try #require(hub.subscribe(leaving, limit: 10))
        let (_, closing) = try #require(hub.subscribe(staying, limit: 10))

        // Sent before it left, run after: still not written.
        hub.broadcast("before")
        hub.unsubscribe(gone)
        hub.broadcast("after")
        loop.run()
        #expect(try written(leaving).isEmpty)
        #expect(try written(staying) == ["before", "after"])

        // A slot freed by the client that left is taken again.
        let (again, _) = try #require(hub.subscribe(EmbeddedChannel(loop: loop), limit: 2))
        hub.unsubscribe(again)

        #expect(hub.close())
        #expect(!hub.close(), "closed twice")
        hub.broadcast("closed")
        loop.run()
        #expect(try written(staying).isEmpty)
        // The closing stream of the client still in has ended: its handler closes the socket.
        for await _ in closing {}
        #expect(hub.subscribe(EmbeddedChannel(loop: loop), limit: 10) == nil, "subscribed after closing")
        for channel in [leaving, staying] { _ = try channel.finish() }
    }
}
