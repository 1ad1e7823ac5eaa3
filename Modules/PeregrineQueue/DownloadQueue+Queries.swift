import PeregrineChecksums

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension DownloadQueueing {
    // MARK: By URL

    /// A task's state; `DownloadState.notInList` for an unknown URL (SDE's `downloadState(ofTask:)`).
    public func downloadState(ofTask urlString: String) -> DownloadState { engine.state(ofTask: urlString) }

    /// A task as the engine sees it now (record, received bytes, queue position); nil when unknown.
    public func task(_ urlString: String) -> DownloadTaskSnapshot? { engine.task(urlString) }

    /// The name to show: the display name given with ``changeDisplayNameOfTask(_:to:)``, else the
    /// file's name, without its extension when ``hiddenFileExtension`` is on; nil for an unknown
    /// task (SDE's `fileDisplayName(ofTask:)`).
    public func fileDisplayName(ofTask urlString: String) -> String? {
        if let name = core.state.withLock({ $0.extras[urlString]?.displayName }) {
            guard hiddenFileExtension, let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
            return String(name[..<dot])
        }
        return engine.fileDisplayName(ofTask: urlString)
    }

    /// Progress in 0…1; -1 for an unknown task (SDE's `downloadProgress(ofTask:)`, which
    /// returned a `Float`). A `Double`, as a handle's ``DownloadTaskHandle/Progress/fractionCompleted``.
    public func downloadProgress(ofTask urlString: String) -> Double { engine.downloadProgress(ofTask: urlString) }

    /// The file's size; -1 when unknown (SDE's `fileByteCount(ofTask:)`).
    public func fileByteCount(ofTask urlString: String) -> Int64 { engine.fileByteCount(ofTask: urlString) }

    /// The finished file's path; nil unless finished and present (SDE's `filePath(ofTask:)`; the
    /// rest of the API gives locations as file URLs: ``fileURL(ofTask:)``).
    public func filePath(ofTask urlString: String) -> String? { engine.filePath(ofTask: urlString) }

    /// The finished file's URL (SDE's `fileURL(ofTask:)`).
    public func fileURL(ofTask urlString: String) -> URL? { engine.fileURL(ofTask: urlString) }

    /// `41.6 MB/402.5 MB`, `402.5 MB` or the failure; nil while downloading or for an unknown
    /// task (SDE's `downloadDetail(ofTask:)`).
    public func downloadDetail(ofTask urlString: String) -> String? { engine.downloadDetail(ofTask: urlString) }

    /// "Image", "Audio", "Video", "Document" or "Other"; nil for an unknown task (SDE's
    /// `fileType(ofTask:)`).
    public func fileType(ofTask urlString: String) -> String? { engine.fileKind(ofTask: urlString)?.rawValue }

    /// Whether the task is finished and its file exists (SDE's `isFileExisted(ofTask:)`).
    public func isFileExisted(ofTask urlString: String) -> Bool { engine.isFileExisted(ofTask: urlString) }

    // MARK: Verification

    /// What is known about a task's checksum: verified while downloading, a mismatch, or
    /// unverified; nil for an unknown task. Saved in the store beside the state.
    public func verificationResult(ofTask urlString: String) -> VerificationResult? {
        engine.verificationResult(ofTask: urlString)
    }

    /// Hashes finished files again (off the caller's thread) and records each result; a file
    /// changed on disk becomes a mismatch (the task stays finished). See
    /// `DownloadEngine.verifyTasks(_:)`.
    public func verifyTasks(_ urlStrings: [String]) async -> [String: Result<VerificationResult, VerificationError>] {
        await engine.verifyTasks(urlStrings)
    }

    // MARK: By location

    /// The state of the task at a location; `DownloadState.notInList` when out of bounds.
    public func downloadState(at indexPath: ListIndexPath, in list: DownloadListKey = .default) -> DownloadState {
        downloadURLString(at: indexPath, in: list).map(downloadState(ofTask:)) ?? .notInList
    }

    /// The display name of the task at a location; nil when out of bounds.
    public func fileDisplayName(at indexPath: ListIndexPath, in list: DownloadListKey = .default) -> String? {
        downloadURLString(at: indexPath, in: list).flatMap(fileDisplayName(ofTask:))
    }

    /// The progress of the task at a location; -1 when out of bounds.
    public func downloadProgress(at indexPath: ListIndexPath, in list: DownloadListKey = .default) -> Double {
        downloadURLString(at: indexPath, in: list).map(downloadProgress(ofTask:)) ?? -1
    }

    /// The file size of the task at a location; -1 when out of bounds or unknown.
    public func fileByteCount(at indexPath: ListIndexPath, in list: DownloadListKey = .default) -> Int64 {
        downloadURLString(at: indexPath, in: list).map(fileByteCount(ofTask:)) ?? -1
    }

    /// The finished file's path of the task at a location.
    public func filePath(at indexPath: ListIndexPath, in list: DownloadListKey = .default) -> String? {
        downloadURLString(at: indexPath, in: list).flatMap(filePath(ofTask:))
    }

    /// The finished file's URL of the task at a location.
    public func fileURL(at indexPath: ListIndexPath, in list: DownloadListKey = .default) -> URL? {
        downloadURLString(at: indexPath, in: list).flatMap(fileURL(ofTask:))
    }

    /// The download detail of the task at a location.
    public func downloadDetail(at indexPath: ListIndexPath, in list: DownloadListKey = .default) -> String? {
        downloadURLString(at: indexPath, in: list).flatMap(downloadDetail(ofTask:))
    }

    /// The file type of the task at a location.
    public func fileType(at indexPath: ListIndexPath, in list: DownloadListKey = .default) -> String? {
        downloadURLString(at: indexPath, in: list).flatMap(fileType(ofTask:))
    }

    // MARK: Meta info and display names

    /// SDE's reserved meta info key for a file's display name.
    public static var fileDisplayNameKey: String { "Key.String.FileDisplayName" }
    /// SDE's reserved meta info key for a file's introduction.
    public static var fileIntroKey: String { "Key.String.FileIntro" }

    /// Adds or replaces meta info of a task (SDE's `updateMetaInfo(_:forTask:)`); saved in the
    /// store.
    ///
    /// - Throws: ``DownloadManagerError/Code/notPropertyList`` when a value is not a property-list
    ///   value, ``DownloadManagerError/Code/unknownTask``; nothing changes then.
    public func updateMetaInfo(_ info: [String: Any], forTask urlString: String) throws(DownloadManagerError) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        var converted: [String: PropertyListValue] = [:]
        for (key, value) in info { converted[key] = try PropertyListValue(converting: value) }
        try updateMetaInfo(converted, forTask: urlString)
    }

    /// Adds or replaces meta info of a task, as property-list values.
    ///
    /// - Throws: ``DownloadManagerError/Code/unknownTask``; nothing changes then.
    public func updateMetaInfo(
        _ info: [String: PropertyListValue], forTask urlString: String
    ) throws(DownloadManagerError) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try updateExtras(of: urlString) { $0.metaInfo.merge(info) { _, new in new } }
        core.announce([.metaInfoChanged(urlString)])
    }

    /// A task's meta info value for `key` as a Swift value (`String`, `Int`, `Double`, `Bool`,
    /// `Date`, `Data`, `[Any]`, `[String: Any]`); nil when absent (SDE's `info(ofTask:about:)`).
    public func info(ofTask urlString: String, about key: String) -> Any? {
        metaInfo(ofTask: urlString)?[key]?.anyValue
    }

    /// Everything about a task as a dictionary (SDE's `info(ofTask:)`): its meta info plus
    /// `URLString`, `state`, `fileName`, `displayName`, `fileByteCount`, `receivedByteCount`,
    /// `addTime`, `fileType` and, when finished, `filePath`; nil for an unknown task.
    public func info(ofTask urlString: String) -> [String: Any]? {
        guard let snapshot = engine.task(urlString) else { return nil }
        var info: [String: Any] = (metaInfo(ofTask: urlString) ?? [:]).mapValues(\.anyValue)
        info["URLString"] = urlString
        info["state"] = snapshot.state
        info["fileName"] = snapshot.record.fileName ?? snapshot.record.preferredFileName
        info["displayName"] = fileDisplayName(ofTask: urlString)
        info["fileByteCount"] = fileByteCount(ofTask: urlString)
        info["receivedByteCount"] = snapshot.receivedBytes
        info["addTime"] = snapshot.record.addedAt
        info["fileType"] = fileType(ofTask: urlString)
        info["filePath"] = filePath(ofTask: urlString)
        return info
    }

    /// One line about a task for logs and debugging (SDE's `printInfoForTask(_:)`, which printed
    /// it): state, location, bytes, file.
    public func debugDescription(ofTask urlString: String) -> String {
        guard let snapshot = engine.task(urlString) else { return "\(urlString): not in the manager" }
        let location = indexPath(ofTask: urlString).map { "\($0)" } ?? "in the trash"
        let size = fileByteCount(ofTask: urlString)
        return "\(urlString): \(snapshot.state) at \(location), \(snapshot.receivedBytes)/\(size) bytes, "
            + "file \(snapshot.record.fileName ?? "-")"
    }

    /// A task's meta info; nil for an unknown task.
    public func metaInfo(ofTask urlString: String) -> [String: PropertyListValue]? {
        core.state.withLock { state in
            state.isTask(urlString) ? state.extras[urlString]?.metaInfo ?? [:] : nil
        }
    }

    /// Changes the name shown for a task (SDE's `changeDisplayNameOfTask(_:to:)`); the fileName
    /// sort uses it.
    ///
    /// - Throws: ``DownloadManagerError/Code/invalidArgument`` for an empty name,
    ///   ``DownloadManagerError/Code/unknownTask`` for a task not in a list (the trash does not
    ///   count); nothing changes then.
    public func changeDisplayNameOfTask(_ urlString: String, to newDisplayName: String) throws(DownloadManagerError) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        guard !newDisplayName.isEmpty else {
            throw DownloadManagerError(.invalidArgument, "a display name cannot be empty")
        }
        try requireListed([urlString])
        try updateExtras(of: urlString) { $0.displayName = newDisplayName }
        if let key = core.state.withLock({ $0.listKey(of: urlString) }) { pushOrder(key) }
        core.announce([.displayNameChanged(urlString)])
    }

    /// Changes a task's extras in a step; then the engine reports the task's record again,
    /// so that the queue stores it with them and its list re-places it.
    private func updateExtras(of urlString: String, _ body: (inout TaskExtras) -> Void) throws(DownloadManagerError) {
        try core.state.withLock { (state) throws(DownloadManagerError) in
            guard state.isTask(urlString) else { throw DownloadManagerError.unknown(urlString) }
            var extras = state.extras[urlString] ?? TaskExtras()
            body(&extras)
            state.extras[urlString] = extras.isEmpty ? nil : extras
        }
        engine.reportRecords([urlString])
    }
}
