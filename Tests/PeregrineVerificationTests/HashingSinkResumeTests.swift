import PeregrineEngine
import PeregrineTransport
import PeregrineVerification
import TestSupport
import Testing

/// Resuming: hash the bytes already on disk once, then the new ones, and get the whole file's digest.
@Suite("HashingSink resume")
struct HashingSinkResumeTests {
    static let data = ChecksumTestFiles.bytes(11 << 20, seed: 0x5E5)

    @Test(arguments: [0, 1, 4095, 4096, (1 << 20) + 7, 9 << 20, 11 << 20])
    func primingWithTheBytesOnDiskThenContinuingGivesTheWholeFileDigest(_ resumeAt: Int) async throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-resume")
        defer { directory.remove() }
        let path = directory.path("partial.bin")
        // What an earlier, interrupted transfer left on disk.
        try ChecksumTestFiles.write(Array(Self.data[0..<resumeAt]), to: path)

        let file = try FileSink(path: path, mode: .keepExisting)
        let sink = try HashingSink(.sha256, wrapping: file)
        try await sink.prime(fromFileAt: path, length: Int64(resumeAt))
        #expect(sink.state == .hashing(nextOffset: Int64(resumeAt)))
        try Self.data.withUnsafeBytes { raw in
            for chunk in ChecksumTestFiles.randomChunks(total: raw.count - resumeAt, seed: UInt64(resumeAt)) {
                let range = (chunk.lowerBound + resumeAt)..<(chunk.upperBound + resumeAt)
                try sink.write(UnsafeRawBufferPointer(rebasing: raw[range]), at: Int64(range.lowerBound))
            }
        }
        try sink.flush()
        try file.close()

        let whole = try ChecksumTestFiles.checksum(.sha256, of: Self.data)
        #expect(try sink.finish() == whole)
        #expect(try FileVerifier().verify(fileAt: path, against: whole) == .verified)
    }

    @Test func primingReadsOnlyTheRequestedPrefix() async throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-resume")
        defer { directory.remove() }
        let path = directory.path("longer.bin")
        // The file holds more than the resume offset (bytes past the synchronized offset).
        try ChecksumTestFiles.write(Array(Self.data[0..<300_000]), to: path)
        let sink = try HashingSink(.md5, downstream: .none)
        try await sink.prime(fromFileAt: path, length: 200_000)
        try Self.data.withUnsafeBytes {
            try sink.write(UnsafeRawBufferPointer(rebasing: $0[200_000..<400_000]), at: 200_000)
        }
        #expect(try sink.finish() == (try ChecksumTestFiles.checksum(.md5, of: Array(Self.data[0..<400_000]))))
    }

    @Test func primingFromAFileShorterThanTheOffsetIsAnError() async throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-resume")
        defer { directory.remove() }
        let path = directory.path("short.bin")
        try ChecksumTestFiles.write(Array(Self.data[0..<1000]), to: path)
        let sink = try HashingSink(.sha256, downstream: .none)
        let error = await #expect(throws: VerificationError.self) {
            try await sink.prime(fromFileAt: path, length: 1001)
        }
        #expect(error?.code == .unreadableFile)
        #expect(error?.message.contains("holds 1000 bytes") == true)
        #expect(throws: VerificationError.self) { try sink.finish() }
    }

    @Test func primingFromAMissingFileIsAnError() async throws {
        let sink = try HashingSink(.sha256, downstream: .none)
        let error = await #expect(throws: VerificationError.self) {
            try await sink.prime(fromFileAt: "/nonexistent/peregrine/partial.bin", length: 10)
        }
        #expect(error?.code == .unreadableFile)
        guard case .invalidated = sink.state else {
            Issue.record("a sink that could not be primed must not give a digest; state \(sink.state)")
            return
        }
    }

    @Test func primingAfterAWriteOrTwiceIsRefused() async throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-resume")
        defer { directory.remove() }
        let path = directory.path("file.bin")
        try ChecksumTestFiles.write(Array(Self.data[0..<100]), to: path)

        let written = try HashingSink(.sha256, downstream: .none)
        try Self.data.withUnsafeBytes { try written.write(UnsafeRawBufferPointer(rebasing: $0[0..<10]), at: 0) }
        let late = await #expect(throws: VerificationError.self) {
            try await written.prime(fromFileAt: path, length: 100)
        }
        #expect(late?.code == .invalidUse)

        let twice = try HashingSink(.sha256, downstream: .none)
        try await twice.prime(fromFileAt: path, length: 100)
        let again = await #expect(throws: VerificationError.self) {
            try await twice.prime(fromFileAt: path, length: 100)
        }
        #expect(again?.code == .invalidUse)
        #expect(try twice.finish() == (try ChecksumTestFiles.checksum(.sha256, of: Array(Self.data[0..<100]))))
    }

    @Test func resumedTransferStartingElsewhereIsReported() async throws {
        let directory = try TemporaryDirectory(prefix: "peregrine-resume")
        defer { directory.remove() }
        let path = directory.path("file.bin")
        try ChecksumTestFiles.write(Array(Self.data[0..<5000]), to: path)
        let sink = try HashingSink(.sha256, downstream: .none)
        try await sink.prime(fromFileAt: path, length: 5000)
        // The server sent the whole file again from 0 (a 200 instead of a 206).
        try Self.data.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[0..<8000]), at: 0) }
        let error = #expect(throws: VerificationError.self) { try sink.finish() }
        #expect(error?.code == .nonContiguousWrite)
    }
}
