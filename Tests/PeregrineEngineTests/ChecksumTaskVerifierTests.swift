import Foundation
import PeregrineCore
import PeregrineEngine
import PeregrineTransport
import PeregrineVerification
import TestSupport
import Testing

/// The engine's checksum plug-in on its own: which transfers it hashes, and that a resumed
/// transfer's digest starts with the bytes already on disk.
@Suite("ChecksumTaskVerifier")
struct ChecksumTaskVerifierTests {
    static let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }

    static func context(_ path: String, checksum: String?, startOffset: Int64 = 0) throws -> TaskContext {
        TaskContext(
            url: try DownloadURL("http://mock.test/f.bin"), checksum: checksum, temporaryFilePath: path,
            startOffset: startOffset)
    }

    static func write(_ bytes: ArraySlice<UInt8>, to sink: any TransferSink, at offset: Int64) throws {
        try bytes.withUnsafeBytes { try sink.write($0, at: offset) }
        try sink.flush()
    }

    @Test func aTaskWithoutAChecksumIsNotWrapped() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-checksum-verifier")
        defer { scratch.remove() }
        let verifier = ChecksumTaskVerifier(digests: OpenSSLDigests())
        let sink = MemorySink()
        let context = try Self.context(scratch.path("f.part"), checksum: nil)
        #expect(verifier.sink(wrapping: sink, for: context) === sink)
        #expect(verifier.verdict(sink, for: context) == .unverified)
    }

    @Test func aResumedTransferHashesTheBytesOnDiskThenTheNewOnes() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-checksum-verifier")
        defer { scratch.remove() }
        let path = scratch.path("f.part")
        let half = 123_457
        try Data(Self.bytes[..<half]).write(to: URL(fileURLWithPath: path))
        let expected = try Checksum(.sha256, digest: StreamingHasher.digest(.sha256, of: Self.bytes))
        let verifier = ChecksumTaskVerifier(
            options: .init(bufferCapacity: 10_000, bufferCount: 2), digests: OpenSSLDigests())
        let context = try Self.context(path, checksum: expected.description, startOffset: Int64(half))
        let wrapped = verifier.sink(wrapping: DiscardingSink(), for: context)
        let hashing = try #require(wrapped as? HashingSink)
        try Self.write(Self.bytes[half...], to: wrapped, at: Int64(half))
        #expect(verifier.verdict(wrapped, for: context) == .verified)
        // Verified while streaming, not by reading the file again: the sink holds the digest.
        #expect(hashing.state == .finished(expected))
    }

    @Test func aChangedPartialFileIsAMismatchEvenWhenTheNewBytesAreRight() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-checksum-verifier")
        defer { scratch.remove() }
        let path = scratch.path("f.part")
        var partial = Array(Self.bytes[..<1000])
        partial[10] ^= 0x40
        try Data(partial).write(to: URL(fileURLWithPath: path))
        let expected = try Checksum(.sha256, digest: StreamingHasher.digest(.sha256, of: Self.bytes))
        let verifier = ChecksumTaskVerifier(digests: OpenSSLDigests())
        let context = try Self.context(path, checksum: expected.description, startOffset: 1000)
        let wrapped = verifier.sink(wrapping: DiscardingSink(), for: context)
        try Self.write(Self.bytes[1000...], to: wrapped, at: 1000)
        let verdict = verifier.verdict(wrapped, for: context)
        #expect(verdict.isMismatch)
        #expect(verdict.failure?.code == .verification)
        let actual = try Checksum(.sha256, digest: StreamingHasher.digest(.sha256, of: partial + Self.bytes[1000...]))
        #expect(verdict.result == .mismatch(expected: expected, actual: actual))
    }

    @Test func aSinkThatCouldNotHashFallsBackToTheFile() throws {
        let scratch = try TemporaryDirectory(prefix: "peregrine-checksum-verifier")
        defer { scratch.remove() }
        let path = scratch.path("f.part")
        try Data(Self.bytes).write(to: URL(fileURLWithPath: path))
        let expected = try Checksum(.md5, digest: StreamingHasher.digest(.md5, of: Self.bytes))
        let verifier = ChecksumTaskVerifier(digests: OpenSSLDigests())
        let context = try Self.context(path, checksum: expected.description)
        let wrapped = verifier.sink(wrapping: DiscardingSink(), for: context)
        // Out of order: the streamed digest is void, the file on disk is complete.
        try Self.write(Self.bytes[1000...], to: wrapped, at: 1000)
        try Self.write(Self.bytes[..<1000], to: wrapped, at: 0)
        #expect(verifier.verdict(wrapped, for: context) == .verified)
    }

    @Test func specificationsAreValidatedAsChecksums() {
        let verifier = ChecksumTaskVerifier(digests: OpenSSLDigests())
        #expect(throws: VerificationError.self) { try verifier.validate(checksum: "crc32=00000000") }
        #expect(throws: Never.self) {
            try verifier.validate(checksum: "md5=D41D8CD98F00B204E9800998ECF8427E")
        }
    }
}
