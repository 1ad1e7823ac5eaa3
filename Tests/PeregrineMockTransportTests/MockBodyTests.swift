import PeregrineMockTransport
import Testing

@Suite("MockBody")
struct MockBodyTests {
    @Test func generatedBodyIsStableAcrossRuns() {
        // Pinned: a change to the generator changes every digest tests compute from it.
        let body = MockBody.generated(seed: 1, count: 16)
        #expect(body.allBytes == MockBody.generated(seed: 1, count: 16).allBytes)
        #expect(
            body.allBytes.map { byte in String(byte >> 4, radix: 16) + String(byte & 15, radix: 16) }.joined(
                separator: " ") == Self.seedOneFirstBytes)
    }

    static let seedOneFirstBytes = "c1 5c 02 89 ec 2d 0a 91 67 ec 8e 65 a1 8d eb be"

    @Test func generatedBodyDiffersBetweenSeeds() {
        #expect(
            MockBody.generated(seed: 1, count: 64).allBytes != MockBody.generated(seed: 2, count: 64).allBytes)
    }

    @Test func anyRangeOfAGeneratedBodyMatchesTheWhole() {
        let body = MockBody.generated(seed: 42, count: 1000)
        let whole = body.allBytes
        for range in [0..<1, 1..<9, 3..<17, 7..<8, 500..<1000, 999..<1000, 8..<16, 0..<1000] as [Range<Int64>] {
            #expect(body.bytes(in: range) == Array(whole[Int(range.lowerBound)..<Int(range.upperBound)]))
        }
    }

    @Test func hugeGeneratedBodyReadsAnyRangeWithoutHoldingIt() {
        let body = MockBody.generated(seed: 7, count: 1 << 40)  // 1 TiB
        #expect(body.count == 1 << 40)
        let tail = body.bytes(in: (1 << 40) - 5..<(1 << 40))
        #expect(tail.count == 5)
        #expect(body.bytes(in: (1 << 40) - 5..<(1 << 40)) == tail)
    }

    @Test func chunksCoverTheRangeInOrder() {
        let body = MockBody.generated(seed: 3, count: 10_000)
        var collected: [UInt8] = []
        var sizes: [Int] = []
        body.forEachChunk(in: 100..<10_000, chunkSize: 4096) {
            collected.append(contentsOf: $0)
            sizes.append($0.count)
        }
        #expect(collected == body.bytes(in: 100..<10_000))
        #expect(sizes == [4096, 4096, 1708])
    }

    @Test func givenBytesAndTextAreServedAsIs() {
        #expect(MockBody.bytes([1, 2, 3]).bytes(in: 1..<3) == [2, 3])
        #expect(MockBody.text("héllo").allBytes == Array("héllo".utf8))
        #expect(MockBody.empty.isEmpty)
        #expect(MockBody.text("abc").count == 3)
    }
}
