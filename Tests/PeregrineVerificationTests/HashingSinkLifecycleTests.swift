import PeregrineTransport
import PeregrineVerification
import Testing

/// Flushing, finishing, verifying, and failures of the wrapped sink.
@Suite("HashingSink lifecycle")
struct HashingSinkLifecycleTests {
    static let data = ChecksumTestFiles.bytes(3_000_000, seed: 11)

    static func writeAll(_ sink: HashingSink, chunk: Int = 100_000) throws {
        try data.withUnsafeBytes { raw in
            var start = 0
            while start < raw.count {
                let end = min(start + chunk, raw.count)
                try sink.write(UnsafeRawBufferPointer(rebasing: raw[start..<end]), at: Int64(start))
                start = end
            }
        }
    }

    @Test func flushGoesToTheWrappedSinkEachTime() throws {
        let recorder = HashingSinkRecorder()
        let sink = try HashingSink(.sha256, wrapping: recorder)
        try sink.flush()
        try Self.writeAll(sink)
        try sink.flush()
        try sink.flush()
        #expect(recorder.flushCount == 3)
        #expect(try sink.finish() == ChecksumTestFiles.checksum(.sha256, of: Self.data))
    }

    @Test func verifyGivesVerifiedOrMismatchWithTheActualDigest() throws {
        let expected = try ChecksumTestFiles.checksum(.sha512, of: Self.data)
        let right = try HashingSink(.sha512, downstream: .none)
        try Self.writeAll(right)
        #expect(try right.verify(against: expected) == .verified)

        let wrong = try ChecksumTestFiles.wrongChecksum(.sha512, for: Self.data)
        let other = try HashingSink(.sha512, downstream: .none)
        try Self.writeAll(other)
        #expect(try other.verify(against: wrong) == .mismatch(expected: wrong, actual: expected))
    }

    @Test func verifyRefusesAChecksumOfAnotherAlgorithm() throws {
        let sink = try HashingSink(.sha256, downstream: .none)
        let error = #expect(throws: VerificationError.self) {
            try sink.verify(against: ChecksumTestFiles.checksum(.md5, of: []))
        }
        #expect(error?.code == .algorithmMismatch)
    }

    @Test func finishingTwiceGivesTheSameChecksumAndLaterWritesFail() throws {
        let recorder = HashingSinkRecorder()
        let sink = try HashingSink(.sha3_256, wrapping: recorder)
        try Self.writeAll(sink)
        let first = try sink.finish()
        #expect(try sink.finish() == first)
        let error = #expect(throws: VerificationError.self) {
            try [UInt8](repeating: 0, count: 10).withUnsafeBytes { try sink.write($0, at: Int64(Self.data.count)) }
        }
        #expect(error?.code == .invalidUse)
        #expect(recorder.bytes.count == Self.data.count)
    }

    @Test func failingWrappedSinkRethrowsAndInvalidatesTheDigest() throws {
        let recorder = HashingSinkRecorder(failAtWrite: 3)
        let sink = try HashingSink(.sha256, wrapping: recorder)
        #expect(throws: SinkWriteError.self) { try Self.writeAll(sink) }
        guard case .invalidated(let reason) = sink.state else {
            Issue.record("expected an invalidated sink, got \(sink.state)")
            return
        }
        #expect(reason.code == .downstreamWriteFailed)
        #expect(reason.message.contains("no space left"))
        #expect(throws: VerificationError.self) { try sink.finish() }
    }

    @Test func releasingAnUnfinishedSinkIsSafe() throws {
        for _ in 0..<20 {
            let sink = try HashingSink(.sha256, downstream: .none, options: .init(bufferCapacity: 4096, bufferCount: 2))
            try Self.writeAll(sink, chunk: 10_000)
        }
    }
}
