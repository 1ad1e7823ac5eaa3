import Dispatch
import PeregrineChecksums
import PeregrineCore
import PeregrineTransport

extension DownloadEngine {
    /// The most bytes a checksum file may have: 1 MiB, far more than any `SHA256SUMS`.
    public static let checksumFileSizeLimit = 1 << 20

    // MARK: Results

    /// What is known about a task's checksum: `VerificationResult.verified` once its file
    /// matched, a mismatch (the task failed, or ``verifyTasks(_:)`` found the file changed), or
    /// unverified; nil for an unknown task.
    public func verificationResult(ofTask urlString: String) -> VerificationResult? {
        state.withLock { $0.tasks[urlString]?.record.verification }
    }

    // MARK: Checking again

    /// Hashes the finished files of tasks again, on a thread of its own (never the caller's),
    /// and records each result beside the task's state: a file changed on disk since it
    /// finished is a `VerificationResult.mismatch(expected:actual:)`; the task stays finished.
    ///
    /// - Returns: for each URL string given, the result, or why there is none:
    ///   `VerificationError.Code.nothingToVerify` for a task that is unknown, not finished or
    ///   without a checksum, `VerificationError.Code.unreadableFile` for a file gone or
    ///   unreadable, a checksum parsing code for a stored checksum that cannot be read.
    public func verifyTasks(_ urlStrings: [String]) async -> [String: Result<VerificationResult, VerificationError>] {
        guard let digests = configuration.digests else {
            let error = VerificationError(
                .unsupportedAlgorithm, "this engine has no digest provider (its configuration's `digests`)")
            return Dictionary(urlStrings.map { ($0, .failure(error)) }, uniquingKeysWith: { first, _ in first })
        }
        let jobs = state.withLock { state in
            urlStrings.map { key -> (String, Result<(path: String, checksum: Checksum), VerificationError>) in
                guard let entry = state.tasks[key] else {
                    return (key, .failure(VerificationError(.nothingToVerify, "\(key) is not a task of this engine")))
                }
                guard entry.machine.state == .finished, let name = entry.record.fileName,
                    let path = directory.location(of: name)
                else {
                    return (key, .failure(VerificationError(.nothingToVerify, "\(key) is not finished")))
                }
                guard let specification = entry.record.checksum else {
                    return (key, .failure(VerificationError(.nothingToVerify, "\(key) has no checksum")))
                }
                do throws(VerificationError) {
                    return (key, .success((path, try Checksum(parsing: specification))))
                } catch {
                    return (key, .failure(error))
                }
            }
        }
        let results = await withCheckedContinuation {
            (continuation: CheckedContinuation<[String: Result<VerificationResult, VerificationError>], Never>) in
            DispatchQueue.global(qos: .utility).async {
                var results: [String: Result<VerificationResult, VerificationError>] = [:]
                let verifier = FileVerifier(digests: digests)
                for (key, job) in jobs {
                    switch job {
                    case .failure(let error):
                        results[key] = .failure(error)
                    case .success(let (path, checksum)):
                        do throws(VerificationError) {
                            results[key] = .success(try verifier.verify(fileAt: path, against: checksum))
                        } catch {
                            results[key] = .failure(error)
                        }
                    }
                }
                continuation.resume(returning: results)
            }
        }
        perform { state, effects in
            for (key, result) in results {
                guard case .success(let verification) = result, let entry = state.tasks[key],
                    entry.machine.state == .finished, entry.record.verification != verification
                else { continue }
                entry.record.verification = verification
                effects.markDirty(key)
            }
        }
        return results
    }

    // MARK: Checksum files

    /// Fetches a task's checksum file into memory through the transport, reads the task's
    /// checksum from it, then launches the transfer; a checksum file that is missing, too large,
    /// unreadable or without an entry for the file fails the task (``FailureReason/Code/verification``).
    func fetchChecksum(from checksumURL: DownloadURL, for attempt: TransferAttempt) {
        var request = TransferRequest(url: checksumURL)
        configuration.requestAdapter?.adapt(&request, for: attempt.context)
        let sink = MemorySink(limit: Self.checksumFileSizeLimit)
        let id = transport.start(request, sink: sink) { [weak self] event in
            guard case .completed(let result) = event, let self else { return }
            self.checksumFetched(result, bytes: sink.bytes, from: checksumURL, for: attempt)
        }
        // Pausing or cancelling the task meanwhile acts on this transfer.
        attempt.didStart(id, on: transport)
    }

    private func checksumFetched(
        _ result: Result<TransferSummary, TransportError>, bytes: [UInt8], from checksumURL: DownloadURL,
        for attempt: TransferAttempt
    ) {
        guard attempt.isLive else {
            conclude(
                attempt, .failed(Self.checksumCancelled, durableOffset: attempt.startOffset, failure: nil),
                durable: attempt.startOffset)
            return
        }
        let key = attempt.url.string
        let knownName = state.withLock { $0.tasks[key]?.record.fileName }
        let listName = SuggestedFileName.lastPathComponent(of: checksumURL.string) ?? checksumURL.string
        let names = [SuggestedFileName.lastPathComponent(of: key), knownName].compactMap { $0 }
        let checksum: Checksum
        do throws(VerificationError) {
            switch result {
            case .failure(let error):
                throw VerificationError(
                    .checksumFileUnavailable,
                    error.code == .writeFailed
                        ? "\(checksumURL) is larger than \(Self.checksumFileSizeLimit >> 10) KiB: not a checksum file"
                        : "\(checksumURL): \(error.failureReason.description)")
            case .success:
                checksum = try ChecksumList.checksum(
                    fromChecksumFile: String(decoding: bytes, as: UTF8.self), named: listName, forFileNamed: names)
            }
        } catch {
            let status: Int? = if case .failure(let failure) = result { failure.httpStatus } else { nil }
            let reason = FailureReason(
                .verification, httpStatus: status, message: "no checksum from \(checksumURL): \(error)")
            conclude(
                attempt, .failed(reason, durableOffset: attempt.startOffset, failure: nil),
                durable: attempt.startOffset)
            return
        }
        let specification = checksum.description
        perform { state, effects in
            guard let entry = state.tasks[key], entry.attempt === attempt else { return }
            entry.record.checksum = specification
            effects.markDirty(key)
        }
        attempt.context.checksum = specification
        launch(attempt)
    }

    private static let checksumCancelled = FailureReason(
        .unknown, message: "the transfer was cancelled while its checksum file was fetched")
}
