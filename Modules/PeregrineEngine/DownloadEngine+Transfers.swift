import PeregrineChecksums
import PeregrineCore
import PeregrineTransport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension DownloadEngine {
    // MARK: Launching

    /// Starts a prepared attempt's transfer. Runs outside the lock; the attempt owns the
    /// temporary file until it drains, so nothing else touches the file meanwhile.
    func launch(_ attempt: TransferAttempt) {
        if let checksumURL = attempt.checksumURL, attempt.context.checksum == nil {
            fetchChecksum(from: checksumURL, for: attempt)
            return
        }
        // Pieces kept from a segmented download are fetched around, never truncated away, even
        // when splitting is off now (one connection then takes the holes one after another).
        let keptRanges = attempt.resumeRecord?.completedRanges ?? []
        var segmentation = configuration.segmentation
        if let connections = attempt.context.maxConnections {
            segmentation = Segmentation(
                maxConnectionsPerTask: connections, minimumSegmentSize: segmentation.minimumSegmentSize)
        }
        // Mirrors need the segmented transfer even with one connection: a failing source's rest
        // goes to another within the transfer.
        let segmented = segmentation.splits || !keptRanges.isEmpty || !attempt.mirrors.isEmpty
        // Nothing is cut or removed while another writer holds the partial file's lock.
        do throws(FailureReason) {
            if attempt.startOffset == 0, keptRanges.isEmpty {
                // A fresh start writes a new file: the name may still be a link to a file placed
                // from it, whose bytes must not be truncated (see `removeLeftoverLinks`). The
                // new file is locked when the first byte opens it.
                guard try directory.removeUnlessLocked(attempt.temporaryName) else { return partFileBusy(attempt) }
                if segmented {
                    // The pieces open the file each: it is locked once, for all of them.
                    guard let lock = try directory.createLocked(attempt.temporaryName) else {
                        return partFileBusy(attempt)
                    }
                    attempt.partFileLock = lock
                }
            } else {
                // The partial file must hold exactly the bytes the record counts: bytes past the
                // synced offset (or past the last synced range of a segmented download) may be
                // torn.
                let length = max(attempt.startOffset, keptRanges.last?.upperBound ?? 0)
                switch try directory.claimForResume(attempt.temporaryName, length: length) {
                case .locked(let lock):
                    attempt.partFileLock = lock
                case .busy:
                    return partFileBusy(attempt)
                case .short(let size):
                    // Bytes the record counts are not on disk: a resume would place a hole.
                    let reason = FailureReason(
                        .fileSystem,
                        message:
                            "\(attempt.temporaryPath) holds \(size) bytes, fewer than the \(length) its record counts")
                    let failure = TransferFailure(
                        reason: reason, transportError: nil, head: nil, request: TransferRequest(url: attempt.source))
                    attempt.sink = TemporaryFileSink(path: attempt.temporaryPath, startOffset: attempt.startOffset)
                    conclude(attempt, .retry(fromZero: true, durableOffset: 0, failure: failure), durable: 0)
                    return
                }
            }
        } catch {
            attempt.sink = TemporaryFileSink(path: attempt.temporaryPath, startOffset: attempt.startOffset)
            conclude(attempt, .failed(error, durableOffset: attempt.startOffset, failure: nil), durable: 0)
            return
        }
        var request = TransferRequest(url: attempt.source)
        if let record = attempt.resumeRecord, record.offset > 0 || !keptRanges.isEmpty {
            request.range = ByteRange(start: record.offset)
            request.ifRange = record.validator
            // A 206 of a file that changed its length since is refused by the transport as well.
            request.rangeCompleteLength = record.expectedLength
        }
        configuration.requestAdapter?.adapt(&request, for: attempt.context)
        request.bandwidthLimiters += attempt.limiters
        attempt.request = request
        if segmented {
            // Pieces on several connections. A verified file is hashed in file order as the
            // pieces arrive (the transfer feeds the verifier's sink; see SegmentedTransfer).
            let discarding = DiscardingSink()
            let hasher = verifier?.sink(wrapping: discarding, for: attempt.context)
            let transfer = SegmentedTransfer(
                transport: transport, request: request, path: attempt.temporaryPath,
                startOffset: attempt.startOffset, resumeRecord: keptRanges.isEmpty ? nil : attempt.resumeRecord,
                segmentation: segmentation, hasher: hasher === discarding ? nil : hasher, mirrors: attempt.mirrors,
                now: { [clock] in clock.now() }
            ) { [weak self] event in
                self?.handle(event, of: attempt)
            }
            transfer.primary.file.preallocates = configuration.preallocatesFiles
            attempt.sink = transfer.primary.file
            attempt.transferSink = transfer.hasher ?? transfer.primary.file
            attempt.willStart(transfer)
            transfer.start()
            return
        }
        let sink = TemporaryFileSink(path: attempt.temporaryPath, startOffset: attempt.startOffset)
        sink.preallocates = configuration.preallocatesFiles
        sink.isLockedAlready = attempt.partFileLock != nil
        let transferSink = verifier?.sink(wrapping: sink, for: attempt.context) ?? sink
        attempt.sink = sink
        attempt.transferSink = transferSink
        let id = transport.start(request, sink: transferSink) { [weak self] event in
            self?.handle(event, of: attempt)
        }
        attempt.didStart(id, on: transport)
    }

    /// Another writer holds the partial file: the attempt ends without touching it or its
    /// record, and the task tries again later (never from zero, never failing for it: the lock
    /// is held only by a live writer, which ends).
    private func partFileBusy(_ attempt: TransferAttempt) {
        attempt.partFileBusy = true
        attempt.sink = TemporaryFileSink(path: attempt.temporaryPath, startOffset: attempt.startOffset)
        conclude(attempt, busyOutcome(attempt), durable: attempt.startOffset)
    }

    private func busyOutcome(_ attempt: TransferAttempt) -> Outcome {
        let failure = TransferFailure(
            reason: PartFileLock.busy(attempt.temporaryPath), transportError: nil, head: nil,
            request: attempt.request ?? TransferRequest(url: attempt.source))
        var delay = Self.busyRetryDelay
        if case .retryAfter(let wait)? = configuration.retryPolicy?.decision(after: failure, for: attempt.context) {
            delay = max(delay, wait)
        }
        return .retry(fromZero: false, durableOffset: attempt.startOffset, failure: failure, delay: delay)
    }

    /// The least wait before trying a busy partial file again.
    static let busyRetryDelay: Duration = .seconds(2)

    // MARK: Transfer events

    func handle(_ event: TransferEvent, of attempt: TransferAttempt) {
        switch event {
        case .redirected:
            break
        case .head(let head):
            handleHead(head, of: attempt)
        case .progress(let progress):
            handleProgress(progress, of: attempt)
        case .completed(let result):
            // The completion is a transfer's last event, so nothing of this attempt races it.
            if let finishing {
                finishing.async { self.handleCompletion(result, of: attempt) }
            } else {
                handleCompletion(result, of: attempt)
            }
        }
    }

    private func handleHead(_ head: ResponseHead, of attempt: TransferAttempt) {
        attempt.head = head
        guard head.isSuccess else { return }
        // An answer the transport refuses for the range (another version above all): nothing of
        // it may reach the resume record, which must keep naming the partial file's version.
        if let request = attempt.request, request.rangeRefusal(of: head) != nil { return }
        let validator = head.resumeValidator
        attempt.isResumable =
            validator != nil
            && (head.status == 206
                || head.headers.values(for: "Accept-Ranges").contains { $0.lowercased().contains("bytes") })
        let completeLength = head.completeLength
        attempt.completeLength = completeLength
        // The head arrives on the transport's thread before the first byte, like the writes.
        attempt.sink?.expectedByteCount = completeLength.map { $0 - attempt.startOffset }
        let mimeType = head.headers["Content-Type"].map(Self.mimeType(of:))
        let key = attempt.url.string
        perform { state, effects in
            guard let entry = state.tasks[key], entry.attempt === attempt, attempt.isLive else { return }
            var record = entry.record
            if let completeLength { record.expectedLength = completeLength }
            if let mimeType, !mimeType.isEmpty { record.mimeType = mimeType }
            if record.fileName == nil {
                record.fileName = record.inSubdirectory(
                    record.preferredFileName.flatMap(FileNameSanitizer.cleanChosen)
                        ?? SuggestedFileName.make(
                            contentDisposition: head.headers["Content-Disposition"], effectiveURL: head.effectiveURL,
                            url: entry.url))
            }
            entry.record = record
            let resume =
                attempt.isResumable
                ? ResumeRecord(
                    offset: attempt.startOffset, validator: validator, expectedLength: completeLength,
                    completedRanges: attempt.segmented?.durableRanges ?? []) : nil
            try? transition(entry, .updateResumeRecord(resume), &state, &effects)
            if state.conflictPolicy == .skip, let name = record.fileName, directory.exists(name) {
                // Not a byte more: the file is there and must stay.
                attempt.setDisposition(.skipExisting)
                command(attempt, .cancel, &state, &effects)
            } else if let completeLength, let free = directory.availableBytes(),
                completeLength - attempt.startOffset > free
            {
                // Found before the first byte rather than when a write fails half-way; the
                // partial file (and its resume record) stays for when there is room.
                let needed = completeLength - attempt.startOffset
                let reason = FailureReason(
                    .diskFull,
                    message: "not enough free space in \(directory.path): \(needed) bytes needed, \(free) available")
                attempt.setDisposition(.fail(reason))
                command(attempt, .cancel, &state, &effects)
            }
            effects.markDirty(key)
        }
    }

    private func handleProgress(_ progress: TransferProgress, of attempt: TransferAttempt) {
        attempt.receivedBytes = progress.receivedBytes
        let total = attempt.startOffset + progress.receivedBytes
        let now = clock.now()
        let key = attempt.url.string
        let interval = configuration.progressInterval
        perform { state, effects in
            guard let entry = state.tasks[key], entry.attempt === attempt else { return }
            entry.receivedBytes = total
            if attempt.isLive, attempt.lastProgressEvent.map({ now - $0 >= interval }) ?? true {
                attempt.lastProgressEvent = now
                effects.events.append(.progress(key, receivedBytes: total, expectedBytes: entry.record.expectedLength))
            }
        }
        guard attempt.isResumable, attempt.isLive,
            configuration.checkpoint.isDue(
                newBytes: total - attempt.lastCheckpointTotal, elapsed: now - attempt.lastCheckpointTime)
        else { return }
        attempt.lastCheckpointTotal = total
        checkpoint(attempt, at: now)
    }

    /// Syncs the partial file and moves the resume record to the durable offset.
    private func checkpoint(_ attempt: TransferAttempt, at now: Duration) {
        let key = attempt.url.string
        let durable: Int64
        do throws(SinkWriteError) {
            durable = try attempt.synchronizeFile()
        } catch {
            // The next write would fail as well: end the transfer with the reason now.
            let reason = TransportError(.writeFailed, error.message, url: key, errno: error.errno).failureReason
            perform { state, effects in
                attempt.setDisposition(.fail(reason))
                command(attempt, .cancel, &state, &effects)
            }
            return
        }
        attempt.lastCheckpointTime = now
        attempt.lastCheckpointBytes = durable
        perform { state, effects in
            guard let entry = state.tasks[key], entry.attempt === attempt, attempt.isLive,
                let record = entry.machine.resumeRecord
            else { return }
            try? transition(
                entry, .updateResumeRecord(attempt.resumeRecord(record, durableAt: durable)), &state, &effects)
        }
    }

    // MARK: Completion

    /// How a transfer ended, once its file was closed.
    enum Outcome: Sendable {
        /// Complete and checked: place the file (nil: nothing was written, an empty file).
        case finished(temporary: String?, length: Int64, verification: VerificationResult)
        /// Complete but refused by the verifier: fail the task, keep the verification result,
        /// and keep the file aside or delete it (nil: the verifier failed for another reason).
        case rejected(FailureReason, verification: VerificationResult, mismatchedFile: MismatchedFilePolicy?)
        /// The task fails; the partial file is durable up to the offset.
        case failed(FailureReason, durableOffset: Int64, failure: TransferFailure?)
        /// Try again after `delay` (at once when zero), from the durable offset or from zero;
        /// `mismatch` is the result of a checksum mismatch that led to it.
        case retry(
            fromZero: Bool, durableOffset: Int64, failure: TransferFailure?, mismatch: VerificationResult? = nil,
            delay: Duration = .zero)
    }

    private func handleCompletion(_ result: Result<TransferSummary, TransportError>, of attempt: TransferAttempt) {
        guard attempt.sink != nil else { return }
        let initialDisposition = attempt.disposition
        let written = attempt.startOffset + attempt.receivedBytes

        // 1. Close the file, syncing what may be kept.
        var durable = attempt.startOffset
        var closeFailure: FailureReason?
        let succeeded = (try? result.get()) != nil
        switch initialDisposition {
        case .discardPartialFile?, .skipExisting?:
            try? attempt.closeFile()
        case nil where succeeded && (!configuration.checkpoint.syncsFinishedFile || !attempt.fileIsOpened):
            do throws(SinkWriteError) {
                try attempt.closeFile()
                durable = min(written, attempt.lastCheckpointBytes)
            } catch {
                closeFailure = Self.reason(for: error, url: attempt.url.string)
            }
        default:
            do throws(SinkWriteError) {
                durable = try attempt.synchronizeFile()
                try attempt.closeFile()
            } catch {
                closeFailure = Self.reason(for: error, url: attempt.url.string)
                try? attempt.closeFile()
            }
        }

        guard initialDisposition == nil else {
            conclude(
                attempt, .failed(closeFailure ?? Self.cancelled, durableOffset: durable, failure: nil), durable: durable
            )
            return
        }

        // 2. Judge the result.
        let outcome: Outcome
        switch result {
        case .success(let summary):
            outcome = judgeSuccess(summary, attempt: attempt, closeFailure: closeFailure)
        case .failure(let error):
            outcome = judgeFailure(error, attempt: attempt, durable: durable, closeFailure: closeFailure)
        }
        if configuration.usesRemoteTime, case .success(let summary) = result,
            case .finished(let temporary?, _, _) = outcome, let path = directory.location(of: temporary)
        {
            // Before the file takes its name, which keeps the time.
            Self.applyRemoteTime(of: summary.head, to: path)
        }
        conclude(attempt, outcome, durable: durable)
    }

    /// Sets a file's times to the response's `Last-Modified`, when it has a readable one.
    static func applyRemoteTime(of head: ResponseHead, to path: String) {
        guard let text = head.headers.values(for: "Last-Modified").first, let date = HTTPDate.parse(text) else {
            return
        }
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    private func judgeSuccess(
        _ summary: TransferSummary, attempt: TransferAttempt, closeFailure: FailureReason?
    ) -> Outcome {
        let total = attempt.startOffset + summary.receivedBytes
        let temporary = attempt.fileIsOpened || attempt.startOffset > 0 ? attempt.temporaryName : nil
        if let closeFailure {
            return .failed(closeFailure, durableOffset: attempt.startOffset, failure: nil)
        }
        let expected = attempt.head == nil ? summary.head.completeLength : attempt.completeLength
        let onDisk = temporary.flatMap(directory.size(of:)) ?? 0
        if let expected, expected != total || onDisk != total {
            let reason = FailureReason(
                .protocolViolation,
                message: "\(attempt.url) announced \(expected) bytes; \(total) arrived and \(onDisk) are on disk")
            return .failed(reason, durableOffset: 0, failure: nil)
        }
        return judgeFile(attempt, temporary: temporary, length: total, head: summary.head)
    }

    /// Asks the verifier about a complete file: place it, retry (Reed's rule on a mismatch,
    /// then the retry policy), or refuse it.
    private func judgeFile(_ attempt: TransferAttempt, temporary: String?, length: Int64, head: ResponseHead?)
        -> Outcome
    {
        guard let verifier, var transferSink = attempt.transferSink else {
            return .finished(temporary: temporary, length: length, verification: .unverified)
        }
        // A segmented download hashed in order hashes what arrived last now; when that failed,
        // the verifier reads the file back.
        if let segmented = attempt.segmented, segmented.hasher != nil {
            transferSink = segmented.finishHashing(length: length) ?? segmented.primary.file
        }
        let verdict = verifier.verdict(transferSink, for: attempt.context)
        guard var reason = verdict.failure else {
            return .finished(temporary: temporary, length: length, verification: verdict.result)
        }
        let attemptNumber = attempt.mismatchesBefore + 1
        if verdict.isMismatch {
            let most = attempt.verificationRetry.maxAttempts
            reason.message +=
                attemptNumber <= most
                ? " (download \(attemptNumber) of at most \(most))"
                : " (download \(attemptNumber), retried by the retry policy)"
        }
        let failure = TransferFailure(reason: reason, transportError: nil, head: head, request: attempt.request!)
        let mismatch = verdict.isMismatch ? verdict.result : nil
        if verdict.isMismatch { blameSources(of: attempt, for: reason) }
        if verdict.isMismatch,
            case .retryFromZero = attempt.verificationRetry.decision(afterMismatchOnAttempt: attemptNumber)
        {
            return .retry(fromZero: true, durableOffset: 0, failure: failure, mismatch: mismatch)
        }
        switch configuration.retryPolicy?.decision(after: failure, for: attempt.context) ?? .fail {
        case .fail:
            return .rejected(
                reason, verification: verdict.result,
                mismatchedFile: verdict.isMismatch ? attempt.verificationRetry.mismatchedFile : nil)
        case .retry, .retryFromZero:
            return .retry(fromZero: true, durableOffset: 0, failure: failure, mismatch: mismatch)
        case .retryAfter(let delay):
            return .retry(fromZero: true, durableOffset: 0, failure: failure, mismatch: mismatch, delay: delay)
        }
    }

    private func judgeFailure(
        _ error: TransportError, attempt: TransferAttempt, durable: Int64, closeFailure: FailureReason?
    ) -> Outcome {
        if attempt.sink?.foundBusy == true {
            attempt.partFileBusy = true
            return busyOutcome(attempt)
        }
        let failure = TransferFailure(
            reason: closeFailure ?? error.failureReason, transportError: error, head: attempt.head,
            request: attempt.request!)
        if attempt.resumesFromRecord || attempt.segmented != nil {
            if error.code == .rangeNotHonoured {
                // The server sent the whole (possibly changed) file: never splice, start over.
                return .retry(fromZero: true, durableOffset: 0, failure: failure)
            }
            if error.code == .httpStatus, error.httpStatus == 416 {
                let complete = attempt.head?.contentRange?.completeLength
                if complete == attempt.startOffset, directory.size(of: attempt.temporaryName) == attempt.startOffset {
                    // Everything had arrived before the stop.
                    return judgeFile(
                        attempt, temporary: attempt.temporaryName, length: attempt.startOffset, head: attempt.head)
                }
                return .retry(fromZero: true, durableOffset: 0, failure: failure)
            }
        }
        if closeFailure == nil, let failed = failingSource(of: attempt, error) {
            // Another URL of the file is still in use: this one is dropped for the task and
            // the next transfer starts on the next at once, from the synced bytes.
            attempt.droppedSources.append((failed.string, failure.reason))
            logger.notice(
                "a source of the download failed; continuing from another",
                metadata: ["url": "\(attempt.url)", "source": "\(failed)", "reason": "\(failure.reason)"])
            return .retry(fromZero: false, durableOffset: durable, failure: failure)
        }
        if closeFailure == nil, let policy = configuration.retryPolicy {
            switch policy.decision(after: failure, for: attempt.context) {
            case .fail: break
            case .retry: return .retry(fromZero: false, durableOffset: durable, failure: failure)
            case .retryFromZero: return .retry(fromZero: true, durableOffset: 0, failure: failure)
            case .retryAfter(let delay):
                return .retry(fromZero: false, durableOffset: durable, failure: failure, delay: delay)
            }
        }
        return .failed(failure.reason, durableOffset: durable, failure: failure)
    }

    /// Applies a drained transfer's outcome under the lock; `durable` is the offset up to which
    /// its file is known to be on disk, for a transfer cancelled meanwhile.
    func conclude(_ attempt: TransferAttempt, _ outcome: Outcome, durable: Int64) {
        let key = attempt.url.string
        perform { state, effects in
            // Held through placement; released before a next transfer of the task launches.
            defer { attempt.releasePartFileLock() }
            guard let entry = state.tasks[key], entry.attempt === attempt else {
                // The task left (and may have come back as a new task with a file of its own):
                // this file was the attempt's alone.
                if state.tasks[key]?.record.temporaryFileName != attempt.temporaryName {
                    directory.remove(attempt.temporaryName)
                }
                return
            }
            entry.attempt = nil
            for (url, reason) in attempt.droppedSources
                + (attempt.segmented?.droppedSources ?? []).map({
                    ($0.url.string, $0.reason)
                }) where entry.droppedURLs[url] == nil
            {
                entry.droppedURLs[url] = reason
            }
            if attempt.usesOneSourceNext { entry.usesOneSource = true }
            // A stop or delete may have landed while the file was being closed.
            if let disposition = attempt.disposition {
                drain(attempt, disposition, durable: durable, &state, &effects)
            } else {
                switch outcome {
                case .finished(let temporary, let length, let verification):
                    entry.record.verification = verification
                    finishTask(entry, temporary: temporary, length: length, &state, &effects)
                case .failed(let reason, let durable, _):
                    failTask(key, reason, attempt: attempt, durable: durable, &state, &effects)
                case .rejected(let reason, let verification, let mismatchedFile):
                    rejectFile(
                        key, reason, verification: verification, mismatchedFile: mismatchedFile, &state, &effects)
                case .retry(let fromZero, let durable, let failure, let mismatch, let delay):
                    if let mismatch {
                        entry.mismatchCount += 1
                        entry.record.verification = mismatch
                        logger.notice(
                            "checksum mismatch, downloading again",
                            metadata: ["url": "\(key)", "reason": "\(failure?.reason.message ?? "")"])
                    }
                    retryTask(
                        key, fromZero: fromZero, attempt: attempt, durable: durable, failure, delay: delay, &state,
                        &effects)
                }
            }
            // The task may have left in the step (a failure that deletes it, say).
            if entry.attempt == nil, entry.startWhenDrained, entry.machine.state == .downloading,
                state.tasks[key] === entry
            {
                startAttempt(entry, &state, &effects)
            }
        }
    }

    /// A cancelled transfer ended: keep or drop its partial file as decided when cancelling.
    private func drain(
        _ attempt: TransferAttempt, _ disposition: TransferAttempt.Disposition, durable: Int64,
        _ state: inout EngineState, _ effects: inout Effects
    ) {
        let key = attempt.url.string
        switch disposition {
        case .keepPartialFile:
            if let record = state.tasks[key]?.machine.resumeRecord, attempt.isResumable || attempt.startOffset > 0 {
                try? transition(
                    key, .updateResumeRecord(attempt.resumeRecord(record, durableAt: durable)), &state, &effects)
            } else if state.tasks[key]?.machine.resumeRecord == nil {
                directory.remove(attempt.temporaryName)
            }
        case .discardPartialFile:
            directory.remove(attempt.temporaryName)
        case .skipExisting:
            directory.remove(attempt.temporaryName)
            let name = state.tasks[key]?.record.fileName ?? ""
            let reason = FailureReason(
                .fileExists, message: "\(name) already exists in \(directory.path) and the conflict policy is skip")
            failTask(key, reason, attempt: attempt, durable: 0, &state, &effects)
        case .fail(let reason):
            failTask(key, reason, attempt: attempt, durable: durable, &state, &effects)
        }
    }

    private func finishTask(
        _ entry: TaskEntry, temporary: String?, length: Int64, _ state: inout EngineState, _ effects: inout Effects
    ) {
        let key = entry.url.string
        let name = entry.record.fileName ?? entry.record.inSubdirectory(SuggestedFileName.make(for: entry.url))
        let placement: DownloadDirectory.Placement
        do throws(FailureReason) {
            placement = try directory.place(
                temporary: temporary, as: name, policy: state.conflictPolicy, counters: &state.nameCounters)
        } catch {
            failTask(key, error, attempt: nil, durable: 0, &state, &effects)
            return
        }
        switch placement {
        case .placed(let finalName, let keptTemporary):
            // Nothing to clean up without a temporary file: any partial bytes of an earlier
            // transfer are counted by a resume record, so this transfer would have started at
            // them, or were deleted with the record.
            KillPoint.reach("engine.placed")
            if keptTemporary, let temporary {
                let link = LeftoverLink(task: key, temporaryName: temporary, placedName: finalName)
                if !state.holdsPlacedTemporaryNames { effects.leftoverLinks.append(link) }
                state.leftoverLinks[temporary] = link
            }
            entry.record.fileName = finalName
            if let folder = DownloadDirectory.folder(of: finalName) { effects.placedFolders.insert(String(folder)) }
            entry.record.finishedAt = clock.date()
            if entry.record.expectedLength == nil { entry.record.expectedLength = length }
            entry.receivedBytes = length
            do {
                try transition(entry, .succeed, &state, &effects)
            } catch {
                logger.error("a finished transfer did not fit the task's state", metadata: ["error": "\(error)"])
                return
            }
            effects.syncDirectory = effects.syncDirectory || configuration.checkpoint.syncsDirectory
            // The file's URL as the `finished` event just made carries it (one parse, not two).
            let file: URL
            if case .finished(let finishedKey, let url)? = effects.events.last, finishedKey == key {
                file = url
            } else {
                file = URL(filePath: directory.location(of: finalName) ?? directory.path, directoryHint: .notDirectory)
            }
            complete(key, with: .success(file), &state, &effects)
        case .skipped:
            if let temporary { directory.remove(temporary) }
            let reason = FailureReason(
                .fileExists, message: "\(name) already exists in \(directory.path) and the conflict policy is skip")
            failTask(key, reason, attempt: nil, durable: 0, &state, &effects)
        }
    }

    /// A complete file the verifier refused: it never takes its name. A mismatched file is
    /// kept aside as `NAME.mismatch` (replacing an older one) or deleted, per the policy.
    private func rejectFile(
        _ key: String, _ reason: FailureReason, verification: VerificationResult,
        mismatchedFile: MismatchedFilePolicy?, _ state: inout EngineState, _ effects: inout Effects
    ) {
        guard let entry = state.tasks[key] else { return }
        entry.record.verification = verification
        if case .mismatch = verification { entry.mismatchCount += 1 }
        var reason = reason
        if let mismatchedFile, entry.machine.holdsSlot {
            // Shortened first (in bytes, on a character boundary) so that the suffix still fits.
            let name = entry.record.inSubdirectory(
                FileNameSanitizer.limited(
                    entry.record.baseFileName ?? SuggestedFileName.make(for: entry.url),
                    to: FileNameSanitizer.maximumByteCount - MismatchedFilePolicy.suffix.utf8.count))
            let aside = mismatchedFile.asidePath(forDestination: name)
            if let aside, directory.exists(entry.record.temporaryFileName) {
                var counters: [String: Int] = [:]
                do throws(FailureReason) {
                    _ = try directory.place(
                        temporary: entry.record.temporaryFileName, as: aside, policy: .replace, counters: &counters)
                    reason.message += "; the file is kept as \(aside)"
                } catch {
                    logger.warning(
                        "cannot keep a mismatched file aside", metadata: ["url": "\(key)", "error": "\(error)"])
                }
            }
        }
        failTask(key, reason, attempt: nil, durable: 0, &state, &effects)
    }

    private func failTask(
        _ key: String, _ reason: FailureReason, attempt: TransferAttempt?, durable: Int64,
        _ state: inout EngineState, _ effects: inout Effects
    ) {
        guard let entry = state.tasks[key] else { return }
        guard entry.machine.holdsSlot else {
            // Stopped or deleted meanwhile: nothing fails.
            return
        }
        if let attempt, attempt.isResumable || attempt.startOffset > 0, durable > 0 || attempt.segmented != nil,
            let record = entry.machine.resumeRecord
        {
            try? transition(
                key, .updateResumeRecord(attempt.resumeRecord(record, durableAt: durable)), &state, &effects)
        } else {
            try? transition(key, .updateResumeRecord(nil), &state, &effects)
            directory.remove(entry.record.temporaryFileName)
        }
        logger.notice("download failed", metadata: ["url": "\(key)", "reason": "\(reason)"])
        guard (try? transition(key, .fail(reason), &state, &effects)) != nil else { return }
        complete(key, with: .failure(reason), &state, &effects)
    }

    private func retryTask(
        _ key: String, fromZero: Bool, attempt: TransferAttempt, durable: Int64, _ failure: TransferFailure?,
        delay: Duration, _ state: inout EngineState, _ effects: inout Effects
    ) {
        guard let entry = state.tasks[key] else { return }
        // Waiting for another writer is no failure of the download: it uses up no retry.
        if !attempt.partFileBusy { entry.retryCount += 1 }
        entry.previousFailure = failure
        guard entry.machine.state == .downloading else {
            // Paused meanwhile: forget the partial file (unless another writer's); resuming
            // starts from zero.
            guard !attempt.partFileBusy else { return }
            try? transition(key, .updateResumeRecord(nil), &state, &effects)
            directory.remove(entry.record.temporaryFileName)
            return
        }
        if fromZero, delay <= .zero {
            logger.info(
                "restarting from zero", metadata: ["url": "\(key)", "reason": "\(failure?.reason.message ?? "")"])
            try? transition(key, .restartFromZero, &state, &effects)
            return
        }
        if attempt.partFileBusy {
            // Another writer's file: its record and bytes stay as they were.
        } else if !fromZero, attempt.isResumable || attempt.startOffset > 0, durable > 0 || attempt.segmented != nil,
            let record = entry.machine.resumeRecord
        {
            try? transition(
                key, .updateResumeRecord(attempt.resumeRecord(record, durableAt: durable)), &state, &effects)
        } else {
            try? transition(key, .updateResumeRecord(nil), &state, &effects)
            directory.remove(entry.record.temporaryFileName)
        }
        entry.receivedBytes = entry.machine.resumeRecord?.keptByteCount ?? 0
        guard delay > .zero else {
            startAttempt(entry, &state, &effects)
            return
        }
        // Wait on the engine's clock, holding the slot; a pause, stop or delete meanwhile leaves
        // the task in another state or with another transfer, and the timer then does nothing.
        entry.retryGeneration &+= 1
        entry.retryAt = clock.now() + delay
        let generation = entry.retryGeneration
        let reason = failure?.reason ?? FailureReason(.unknown, message: "the transfer failed")
        logger.info(
            "retrying later",
            metadata: ["url": "\(key)", "after": "\(delay)", "retry": "\(entry.retryCount)", "reason": "\(reason)"])
        effects.events.append(.retrying(key, after: delay, reason: reason))
        effects.markDirty(key)
        effects.timers.append(
            (delay, { [weak self] in self?.retryTimerFired(key, generation: generation) }))
    }

    /// A waiting retry's time came: start the transfer unless the task moved on meanwhile.
    private func retryTimerFired(_ key: String, generation: UInt64) {
        perform { state, effects in
            guard let entry = state.tasks[key], entry.retryGeneration == generation, entry.retryAt != nil else {
                return
            }
            entry.retryAt = nil
            guard entry.attempt == nil, entry.machine.state == .downloading else { return }
            startAttempt(entry, &state, &effects)
        }
    }

    // MARK: Mirrors

    /// The source whose failure ended the transfer, when another URL of the file is still in
    /// use and the failure was the source's (not the file system's, not a cancel).
    private func failingSource(of attempt: TransferAttempt, _ error: TransportError) -> DownloadURL? {
        guard !attempt.alternatives.isEmpty, error.code != .writeFailed, error.code != .cancelled,
            error.code != .rangeNotHonoured
        else { return nil }
        let failed: DownloadURL
        if let segmented = attempt.segmented {
            guard let source = segmented.failingSource else { return nil }
            failed = source
        } else {
            failed = attempt.source
        }
        let dropped = Set((attempt.segmented?.droppedSources ?? []).map(\.url.string)).union([failed.string])
        return ([attempt.source] + attempt.alternatives).contains { !dropped.contains($0.string) } ? failed : nil
    }

    /// A checksum mismatch: when one source sent every byte and others are in use, it is
    /// dropped for the task; when several did, later transfers use one source at a time, so
    /// that the next mismatch names its source.
    private func blameSources(of attempt: TransferAttempt, for reason: FailureReason) {
        guard !attempt.alternatives.isEmpty else { return }
        let serving = attempt.segmented?.servingSources ?? [attempt.source]
        // A resumed file holds bytes of earlier transfers too, from sources not counted here.
        if serving.count > 1 || attempt.resumesFromRecord {
            attempt.usesOneSourceNext = true
        } else if let only = serving.first {
            attempt.droppedSources.append((only.string, reason))
        }
    }

    /// The MIME type of a `Content-Type` value: before any parameter, trimmed, lower-cased.
    static func mimeType(of value: String) -> String {
        // Over the bytes: trimming a `Substring` by `Character`s cost ~10,000 instructions.
        let utf8 = value.utf8
        var start = utf8.startIndex
        var end = utf8.firstIndex(of: UInt8(ascii: ";")) ?? utf8.endIndex
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while start < end, isBlank(utf8[start]) { start = utf8.index(after: start) }
        while end > start, isBlank(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        let type = Substring(utf8[start..<end])
        return utf8[start..<end].contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") })
            ? type.lowercased() : String(type)
    }

    private static let cancelled = FailureReason(.unknown, message: "the transfer was cancelled")

    static func reason(for error: SinkWriteError, url: String) -> FailureReason {
        TransportError(.writeFailed, error.message, url: url, errno: error.errno).failureReason
    }
}
