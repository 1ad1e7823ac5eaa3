import PeregrineChecksums
import PeregrineCore
import PeregrineTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The engine's checksum verification: hashes a task's bytes (with a `DigestProvider`, such
/// as `PeregrineVerification`'s `OpenSSLDigests`) while they are written, and compares the digest with the task's checksum (`sha256=…`, see
/// `Checksum(parsing:)`) before the file is renamed into place.
///
/// A transfer's file sink is wrapped in a `HashingSink`, which hashes on a queue of its own
/// (downloading and hashing overlap on two cores) and never holds more than its buffers. A
/// resumed transfer first hashes the bytes already in the temporary file — once, read on the
/// hashing queue while the first new bytes wait behind them — then goes on with the new ones,
/// so the digest always covers the whole file on disk. When the sink could not hash
/// contiguously, the verdict reads the finished temporary file instead (a second pass, never
/// a wrong answer).
///
/// The engine uses it for tasks that carry a checksum when its configuration has
/// ``DownloadEngine/Configuration/digests`` (see ``DownloadEngine/Configuration/verifiesChecksums``);
/// tasks without one are not wrapped.
/// Stateless: one value serves every task, from any thread.
public struct ChecksumTaskVerifier: TaskFileVerifier {
    /// The hashing sink's buffering.
    public var options: HashingSink.Options
    /// What computes the digests.
    public var digests: any DigestProvider

    /// Creates a verifier that hashes with `digests`; `options` sets the hashing sink's buffers
    /// (four of 1 MiB by default).
    public init(options: HashingSink.Options = HashingSink.Options(), digests: any DigestProvider) {
        self.options = options
        self.digests = digests
    }

    public func validate(checksum specification: String) throws(VerificationError) {
        _ = try Checksum(parsing: specification)
    }

    public func sink(wrapping sink: any TransferSink, for task: TaskContext) -> any TransferSink {
        guard let specification = task.checksum, let expected = try? Checksum(parsing: specification),
            let hashing = try? HashingSink(expected.algorithm, wrapping: sink, options: options, digests: digests)
        else { return sink }
        if task.startOffset > 0 {
            // Failing here invalidates the sink; the verdict then reads the whole file.
            try? hashing.startPriming(fromFileAt: task.temporaryFilePath, length: task.startOffset)
        }
        return hashing
    }

    public func verify(_ sink: any TransferSink, for task: TaskContext) -> FailureReason? {
        verdict(sink, for: task).failure
    }

    public func verdict(_ sink: any TransferSink, for task: TaskContext) -> TaskFileVerdict {
        guard let specification = task.checksum else { return .unverified }
        let expected: Checksum
        do throws(VerificationError) {
            expected = try Checksum(parsing: specification)
        } catch {
            return TaskFileVerdict(
                result: .unverified, failure: FailureReason(.verification, message: "unusable checksum: \(error)"))
        }
        let result: VerificationResult
        do throws(VerificationError) {
            if let hashing = sink as? HashingSink, let streamed = try? hashing.verify(against: expected) {
                result = streamed
            } else if task.startOffset == 0, !Self.fileExists(task.temporaryFilePath) {
                // Nothing was written: an empty body creates no temporary file.
                result = try VerificationResult(
                    expected: expected,
                    actual: Checksum(expected.algorithm, digest: digests.digest(expected.algorithm, of: [UInt8]())))
            } else {
                // Not hashed while downloading (or not contiguously): read the file once.
                result = try FileVerifier(digests: digests).verify(fileAt: task.temporaryFilePath, against: expected)
            }
        } catch {
            return TaskFileVerdict(
                result: .unverified, failure: FailureReason(.verification, message: "could not verify: \(error)"))
        }
        return TaskFileVerdict(result: result, failure: result.failureReason)
    }

    private static func fileExists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }
}
