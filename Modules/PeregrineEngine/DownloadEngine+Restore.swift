import PeregrineCore

extension DownloadEngine {
    /// Takes back tasks from stored records (a store's snapshot), after the tasks already in
    /// the engine, in the order given; nothing starts.
    ///
    /// The crash rules of ``TaskStateMachine/recovered(from:resumeRecord:finishedFileExists:)``
    /// apply: a task stored `downloading` or `paused` comes back `stopped` (when its partial
    /// file still holds the recorded bytes) or `pending`; a `finished` task whose file is gone
    /// comes back `pending`. Each such task gets an ``EngineEvent/restored(_:previousState:)``
    /// event; every task an ``EngineEvent/added(_:)`` event. Records with an invalid URL, a
    /// duplicate URL, the `notInList` state or an unsafe temporary file name are rejected.
    @discardableResult
    public func restore(_ records: [DownloadTaskRecord]) -> RestoreResult {
        perform { state, effects in
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
                if let name = record.fileName, FileNameSanitizer.clean(name) != name { record.fileName = nil }
                // A resume record is only as good as the partial file behind it.
                var resume = record.resumeRecord
                if let offset = resume?.offset, (directory.size(of: record.temporaryFileName) ?? -1) < offset {
                    resume = nil
                }
                let finishedFileExists = record.fileName.map(directory.exists) ?? false
                let machine = TaskStateMachine.recovered(
                    from: record.state, resumeRecord: resume, finishedFileExists: finishedFileExists)
                if resume == nil, machine.state != .finished { directory.remove(record.temporaryFileName) }
                let changed = machine.state != record.state
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
                if changed, stored.state != .pending || stored.resumeRecord == nil {
                    effects.events.append(.restored(url.string, previousState: stored.state))
                    result.recovered.append(url.string)
                }
                effects.markDirty(url.string)
                result.restored.append(url.string)
            }
            return result
        }
    }
}
