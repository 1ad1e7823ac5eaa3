import PeregrineCore

extension DownloadEngine {
    /// Takes back tasks from stored records (a store's snapshot), after the tasks already in
    /// the engine, in the order given; nothing starts.
    ///
    /// The crash rules of ``TaskStateMachine/recovered(from:resumeRecord:finishedFileExists:)``
    /// apply: a task stored `downloading` or `paused` comes back `stopped` (when its partial
    /// file still holds the recorded bytes) or `pending`; a `finished` task whose file is gone,
    /// or changed size since it was placed (its bytes are moved under the temporary name, and
    /// dropped when the download starts again), comes back `pending`. Each such task gets an ``EngineEvent/restored(_:previousState:)``
    /// event; every task an ``EngineEvent/added(_:)`` event. Records with an invalid URL, a
    /// duplicate URL, the `notInList` state or an unsafe temporary file name are rejected, and so
    /// are records with a checksum when the engine cannot check one (no digests, no verifier).
    @discardableResult
    public func restore(_ records: [DownloadTaskRecord]) -> RestoreResult {
        var changedFiles: [(url: String, name: String, size: Int64, recorded: Int64)] = []
        let result = perform { state, effects in
            var result = RestoreResult()
            for stored in records {
                let url: DownloadURL
                do throws(URLValidationError) {
                    url = try DownloadURL(stored.urlString)
                } catch {
                    result.rejected.append(.init(urlString: stored.urlString, reason: error.description))
                    continue
                }
                if let existing = state.keysByNormalizedKey[url.normalizedKey]
                    ?? state.tasks[url.string]?.record.urlString
                {
                    result.rejected.append(.init(urlString: stored.urlString, reason: "duplicate of \(existing)"))
                    continue
                }
                guard stored.state != .notInList else {
                    result.rejected.append(.init(urlString: stored.urlString, reason: "stored as not in the list"))
                    continue
                }
                if verifier == nil, configuration.verifiesChecksums, stored.checksum != nil || stored.checksumURL != nil
                {
                    // Never downloaded unchecked: an engine without digests cannot check it.
                    result.rejected.append(
                        .init(
                            urlString: stored.urlString,
                            reason: "carries a checksum and this engine has no digests to check it"))
                    continue
                }
                guard directory.location(of: stored.temporaryFileName) != nil,
                    stored.temporaryFileName.hasPrefix(".")
                else {
                    result.rejected.append(
                        .init(
                            urlString: stored.urlString,
                            reason: "unsafe temporary file name \(stored.temporaryFileName)"))
                    continue
                }
                var record = stored
                var adopted = false
                if let subdirectory = record.subdirectory,
                    DownloadDirectory.normalizedSubdirectory(subdirectory) != subdirectory || subdirectory.isEmpty
                {
                    result.rejected.append(
                        .init(urlString: stored.urlString, reason: "unsafe subdirectory \(subdirectory)"))
                    continue
                }
                if let name = record.fileName,
                    DownloadDirectory.folder(of: name).map(String.init) != record.subdirectory
                {
                    // A file name outside the task's folder is no name of its file.
                    record.fileName = nil
                }
                if let name = record.baseFileName, FileNameSanitizer.clean(name) != name {
                    // A hidden name is the file's only when its task asked for a hidden name.
                    let chosenHidden =
                        record.preferredFileName.flatMap(FileNameSanitizer.cleanChosen)?.hasPrefix(".") ?? false
                    if !chosenHidden || FileNameSanitizer.cleanChosen(name) != name { record.fileName = nil }
                }
                var damaged = false
                if record.state == .finished {
                    // A temporary name left linked to the placed file (killed before its removal).
                    if let name = record.fileName { directory.removeLeftoverLink(record.temporaryFileName, of: name) }
                    if let name = record.fileName, let expected = record.expectedLength,
                        let size = directory.size(of: name), size != expected
                    {
                        // Cut or grown since it was placed: not the file that was downloaded and
                        // verified. Its bytes go under the hidden temporary name (dropped when the
                        // download starts again), so the name is free for the new download.
                        damaged = (try? directory.move(name, to: record.temporaryFileName)) != nil
                        if damaged { changedFiles.append((url.string, name, size, expected)) }
                    }
                } else if let placed = placedFile(of: record, url: url) {
                    // Killed between placing the file and recording it: the file is complete and
                    // was verified before it was placed. Adopt it; never download it again.
                    record.state = .finished
                    record.fileName = placed
                    record.resumeRecord = nil
                    record.finishedAt = clock.date()
                    if record.expectedLength == nil { record.expectedLength = directory.size(of: placed) }
                    if record.checksum != nil, verifier != nil { record.verification = .verified }
                    directory.remove(record.temporaryFileName)
                    adopted = true
                }
                // A resume record is only as good as the partial file behind it.
                var resume = record.resumeRecord
                let partialSize = directory.size(of: record.temporaryFileName) ?? -1
                if let offset = resume?.offset, partialSize < offset {
                    resume = nil
                } else if let kept = resume?.lastKeptByte, partialSize < kept {
                    // Pieces past the prefix that the file does not hold: fetch them again.
                    resume?.completedRanges = []
                }
                let finishedFileExists = record.fileName.map(directory.exists) ?? false
                let machine = TaskStateMachine.recovered(
                    from: record.state, resumeRecord: resume, finishedFileExists: finishedFileExists)
                if resume == nil, machine.state != .finished, !damaged {
                    // Unless another writer holds it: its transfer still runs.
                    _ = try? directory.removeUnlessLocked(record.temporaryFileName)
                }
                let changed = machine.state != stored.state
                record.state = machine.state
                record.resumeRecord = machine.resumeRecord
                if record.expectedLength == nil { record.expectedLength = machine.resumeRecord?.expectedLength }
                if changed, record.state == .pending { record.finishedAt = nil }
                insert(url: url, record: record, machine: machine, &state)
                if machine.state == .finished {
                    state.tasks[url.string]!.receivedBytes =
                        record.expectedLength ?? directory.size(of: record.fileName!) ?? 0
                }
                effects.events.append(.added(url.string))
                if changed, adopted || stored.state != .pending || stored.resumeRecord == nil {
                    effects.events.append(.restored(url.string, previousState: stored.state))
                    result.recovered.append(url.string)
                }
                effects.markDirty(url.string)
                result.restored.append(url.string)
            }
            return result
        }
        for changed in changedFiles {
            logger.notice(
                "a finished file changed size since it was placed; it is downloaded again when the task starts",
                metadata: [
                    "url": "\(changed.url)", "file": "\(changed.name)", "size": "\(changed.size)",
                    "recorded": "\(changed.recorded)",
                ])
        }
        return result
    }

    /// The name a stored, unfinished task's file was placed under, when its temporary name is
    /// still a link to a placed file.
    private func placedFile(of record: DownloadTaskRecord, url: DownloadURL) -> String? {
        let base =
            record.baseFileName ?? record.preferredFileName.flatMap(FileNameSanitizer.cleanChosen)
            ?? SuggestedFileName.make(for: url)
        let parts = FileNameParts(base)
        return directory.placedName(
            ofLeftoverLink: record.temporaryFileName,
            candidates: ([base] + (1...8).map(parts.numbered)).map(record.inSubdirectory))
    }
}
