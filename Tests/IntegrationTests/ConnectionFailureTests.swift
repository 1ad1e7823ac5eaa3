import PeregrineCore
import PeregrineCurlTransport
import PeregrineTransport
import TestSupport
import Testing

/// Failures before any HTTP exchange: nobody listening, a name that does not resolve.
@Suite("CurlTransport reports connection failures")
struct ConnectionFailureTests {
    @Test func portWithoutAListenerFailsWithConnect() async throws {
        let port = try FreePort.pick()
        #expect(!FreePort.isAccepting(port))
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let sink = CountingSink(MemorySink())

        let record = try await TransferMonitor.run(
            try TransferRequest(url: "http://127.0.0.1:\(port)/file.bin"), on: transport, sink: sink)

        #expect(record.error?.code == .connect, "got \(record.result)")
        #expect(record.heads.isEmpty)
        #expect(record.completionCount == 1)
        #expect(sink.byteCount == 0)
    }

    @Test func unresolvableHostFailsWithDNS() async throws {
        // RFC 6761: names under .invalid never resolve, with or without a network.
        let transport = CurlTransport()
        defer { transport.shutdown() }
        let sink = CountingSink(MemorySink())

        let record = try await TransferMonitor.run(
            try TransferRequest(url: "http://does-not-exist.invalid/"), on: transport, sink: sink)

        #expect(record.error?.code == .dns, "got \(record.result)")
        #expect(record.heads.isEmpty)
        #expect(record.completionCount == 1)
        #expect(sink.byteCount == 0)
    }
}
