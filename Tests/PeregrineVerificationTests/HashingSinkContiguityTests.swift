import PeregrineTransport
import PeregrineVerification
import Testing

/// A write out of order invalidates the digest: the sink says so instead of giving a wrong answer.
@Suite("HashingSink non-contiguous writes")
struct HashingSinkContiguityTests {
    static let data = ChecksumTestFiles.bytes(10_000, seed: 5)

    static func write(_ range: Range<Int>, at offset: Int64, to sink: HashingSink) throws {
        try data.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[range]), at: offset) }
    }

    @Test func gapInvalidatesTheDigestButWritesStillGoOn() throws {
        let recorder = HashingSinkRecorder()
        let sink = try HashingSink(.sha256, wrapping: recorder)
        try Self.write(0..<1000, at: 0, to: sink)
        try Self.write(1000..<2000, at: 1500, to: sink)
        try Self.write(2000..<3000, at: 2500, to: sink)
        guard case .invalidated(let reason) = sink.state else {
            Issue.record("expected an invalidated sink, got \(sink.state)")
            return
        }
        #expect(reason.code == .nonContiguousWrite)
        #expect(reason.message.contains("a gap of 500 bytes"))
        #expect(recorder.writeOffsets == [0, 1500, 2500])
        let error = #expect(throws: VerificationError.self) { try sink.finish() }
        #expect(error?.code == .nonContiguousWrite)
        #expect(throws: VerificationError.self) {
            try sink.verify(against: ChecksumTestFiles.checksum(.sha256, of: []))
        }
    }

    @Test func rewindInvalidatesTheDigest() throws {
        let sink = try HashingSink(.sha1, downstream: .none)
        try Self.write(0..<4000, at: 0, to: sink)
        try Self.write(0..<4000, at: 0, to: sink)
        let error = #expect(throws: VerificationError.self) { try sink.finish() }
        #expect(error?.code == .nonContiguousWrite)
        #expect(error?.message.contains("a rewind of 4000 bytes") == true)
    }

    @Test func firstWriteAwayFromZeroInvalidatesTheDigest() throws {
        let sink = try HashingSink(.sha256, downstream: .none)
        try Self.write(0..<100, at: 4096, to: sink)
        let error = #expect(throws: VerificationError.self) { try sink.finish() }
        #expect(error?.code == .nonContiguousWrite)
        // It stays invalid: asking again gives the same answer, never a digest.
        #expect(throws: VerificationError.self) { try sink.finish() }
    }

    @Test func overlappingWriteInvalidatesTheDigest() throws {
        let sink = try HashingSink(.md5, downstream: .none)
        try Self.write(0..<3000, at: 0, to: sink)
        try Self.write(2000..<5000, at: 2000, to: sink)
        #expect(throws: VerificationError.self) { try sink.finish() }
    }
}
