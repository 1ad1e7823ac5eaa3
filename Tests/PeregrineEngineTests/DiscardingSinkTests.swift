import PeregrineTransport
import Testing

@Suite("DiscardingSink")
struct DiscardingSinkTests {
    @Test func discardingSinkCountsEveryByte() throws {
        let sink = DiscardingSink()
        #expect(sink.byteCount == 0)
        try sink.write([UInt8](repeating: 1, count: 1000), at: 0)
        try sink.write([UInt8](repeating: 2, count: 24), at: 5000)
        try sink.write([], at: 0)
        try sink.flush()
        #expect(sink.byteCount == 1024)
    }

    @Test func discardingSinkCountsConcurrentWriters() async throws {
        let sink = DiscardingSink()
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for index in 0..<1000 {
                        try? sink.write([UInt8](repeating: 0, count: 3), at: Int(writer * 3000 + index * 3))
                    }
                }
            }
        }
        #expect(sink.byteCount == 24_000)
    }
}
