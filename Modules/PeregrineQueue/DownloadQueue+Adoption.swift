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

extension DownloadQueueing {
    /// Takes over a download made elsewhere (SDE's `resumeOuterDownload(with:insertAt:)`): the
    /// partial file is copied beside the download directory's files and becomes a `stopped`
    /// task that resumes from its end, sending `validator` as `If-Range` so that a changed file
    /// restarts from zero instead of being spliced.
    ///
    /// - Parameters:
    ///   - urlString: the download's URL.
    ///   - partialFile: the path of the first bytes of the file; it is copied, not moved.
    ///   - validator: the ETag or Last-Modified of the version the bytes came from; without one the
    ///     server is asked for the range unconditionally.
    ///   - expectedLength: the complete length, when known.
    ///   - location: where the task goes in manual mode (required there; ignored otherwise).
    ///   - list: the download list (scope) the task joins.
    ///   - subdirectory: the folder inside the download directory the file goes in (see
    ///     `DownloadItem.subdirectory`).
    /// - Throws: ``DownloadManagerError/Code/invalidArgument`` for an invalid or already known
    ///   URL, ``DownloadManagerError/Code/requiresManualMode``-style errors for a bad location,
    ///   ``DownloadManagerError/Code/fileFailed`` when the partial file cannot be read or copied.
    ///   Nothing changes then.
    /// - Returns: the task's location.
    @discardableResult
    public func resumeOuterDownload(
        urlString: String, partialFile: String, validator: ResumeValidator?, expectedLength: Int64? = nil,
        insertAt location: ListIndexPath? = nil, in list: DownloadListKey = .default, subdirectory: String? = nil
    ) throws(DownloadManagerError) -> ListIndexPath? {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        do {
            _ = try DownloadURL(urlString)
        } catch {
            throw DownloadManagerError(.invalidArgument, error.description)
        }
        guard engine.task(urlString) == nil else {
            throw DownloadManagerError(.invalidArgument, "\(urlString) is already a task")
        }
        let manual = core.state.withLock { $0.lists[list]?.sortType == .manual }
        if manual {
            guard let location else {
                throw DownloadManagerError(.requiresManualMode, "give a location for the task in manual mode")
            }
            try core.state.withLock { (state) throws(DownloadManagerError) in
                let current = state.lists[list] ?? core.newList()
                guard let count = current.taskCountInSection(location.section), location.item >= 0,
                    location.item <= count
                else { throw DownloadManagerError(.indexPathOutOfBounds, "no insertion point \(location)") }
            }
        }
        var status = stat()
        guard stat(partialFile, &status) == 0 else {
            throw DownloadManagerError(.fileFailed, "cannot read \(partialFile)")
        }
        let size = Int64(status.st_size)
        if let expectedLength, size > expectedLength {
            throw DownloadManagerError(
                .invalidArgument, "\(partialFile) holds \(size) bytes, more than the \(expectedLength) expected")
        }
        let temporaryName = DownloadDirectory.temporaryName()
        guard let destination = engine.directory.location(of: temporaryName) else {
            throw DownloadManagerError(.fileFailed, "no temporary file name in \(engine.directory.path)")
        }
        do {
            try FileManager.default.copyItem(atPath: partialFile, toPath: destination)
        } catch {
            throw DownloadManagerError(.fileFailed, "cannot copy \(partialFile): \(error)")
        }
        let record = DownloadTaskRecord(
            urlString: urlString, list: list, state: .stopped,
            resumeRecord: ResumeRecord(offset: size, validator: validator, expectedLength: expectedLength),
            temporaryFileName: temporaryName, expectedLength: expectedLength, addedAt: Date(),
            subdirectory: subdirectory)
        let result = engine.restore([record])
        guard result.restored == [urlString] else {
            _ = engine.directory.remove(temporaryName)
            throw DownloadManagerError(
                .invalidArgument, result.rejected.first?.description ?? "the engine refused \(urlString)")
        }
        let locations = place([urlString], in: list) { (list, items) throws(DownloadListError) in
            if list.sortType == .manual, let location {
                return try list.insert(items, at: location)
            }
            return try list.add(items)
        }
        return locations.first
    }

    /// Takes over the tasks of another store of the same download directory — what an earlier
    /// or parallel run of a program kept there and no process holds now — so that its finished
    /// files are known and its partial files resume (with `If-Range`) instead of being fetched
    /// again under another name.
    ///
    /// Each task comes back as after a crash of that run (see `DownloadEngine.restore(_:)`),
    /// with its display name and meta info, at the end of its list. Tasks this queue already
    /// has, and records the engine refuses, are left out. The caller removes the taken tasks
    /// from the other store once this queue's store has them (``saveData()``).
    ///
    /// - Returns: the URLs of the tasks taken over.
    public func adoptTasks(of snapshot: StoreSnapshot) -> [String] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        // The extras first: the records the restore reports are stored with them.
        let newExtras = core.state.withLock { state in
            var added: [String] = []
            for task in snapshot.tasks where task.displayName != nil || !task.metaInfo.isEmpty {
                guard !state.isTask(task.urlString), state.extras[task.urlString] == nil else { continue }
                state.extras[task.urlString] = TaskExtras(displayName: task.displayName, metaInfo: task.metaInfo)
                added.append(task.urlString)
            }
            return added
        }
        let restored = engine.restore(snapshot.tasks.map(\.engineRecord)).restored
        let taken = Set(restored)
        core.state.withLock { state in
            for url in newExtras where !taken.contains(url) { state.extras[url] = nil }
        }
        var byList: [DownloadListKey: [String]] = [:]
        for url in restored { byList[engine.task(url)?.record.list ?? .default, default: []].append(url) }
        for (key, urls) in byList.sorted(by: { $0.key < $1.key }) {
            place(urls, in: key) { (list, items) throws(DownloadListError) in try list.add(items) }
        }
        return restored
    }
}
