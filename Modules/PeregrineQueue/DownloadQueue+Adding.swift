#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension DownloadQueueing {
    // MARK: Adding in a predefined mode

    /// Downloads new files in a predefined sort mode and returns their locations (SDE's
    /// `download(_:successOrFailHandler:)`). A sort type other than addTime switches to addTime.
    /// With ``downloadNewFileImmediately`` off the tasks are only added; resume them later.
    ///
    /// Invalid and repeated URLs (also the same URL with another case of scheme or host, or a
    /// default port) are left out.
    ///
    /// - Parameters:
    ///   - urlStrings: the URLs to download.
    ///   - list: the download list (scope) the tasks join.
    ///   - successOrFailHandler: called for these tasks instead of ``taskSuccessOrFailHandler``.
    /// - Throws: ``DownloadManagerError/Code/requiresPredefinedMode`` in manual mode (nothing is
    ///   added).
    /// - Returns: the new tasks' locations, in the order given; empty when none was added.
    @discardableResult
    public func download(
        _ urlStrings: [String], in list: DownloadListKey = .default,
        successOrFailHandler: TaskCompletionHandler? = nil
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return try download(urlStrings.map { DownloadItem($0) }, in: list, successOrFailHandler: successOrFailHandler)
            .locations
    }

    /// Downloads new files with a preferred file name or checksum each, in a predefined sort
    /// mode; see ``download(_:in:successOrFailHandler:)-([String],_,_)``.
    ///
    /// - Returns: what the engine did with each URL (added, duplicate, invalid) and the new
    ///   tasks' locations.
    @discardableResult
    public func download(
        _ items: [DownloadItem], in list: DownloadListKey = .default,
        successOrFailHandler: TaskCompletionHandler? = nil
    ) throws(DownloadManagerError) -> (addition: DownloadAddition, locations: [ListIndexPath]) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let manual = core.state.withLock { $0.lists[list]?.sortType == .manual }
        if manual {
            throw DownloadManagerError(
                .requiresPredefinedMode, "the list is in manual mode: give a section or an index path")
        }
        let addition = engine.download(items, in: list, completion: core.deferred(successOrFailHandler))
        let locations = place(addition.added, in: list) { (list, items) throws(DownloadListError) in
            try list.add(items)
        }
        return (addition, locations)
    }

    /// Downloads new files in either mode: where the sort puts them in a predefined mode, at the
    /// end of the last section in manual mode (a placeholder section when there is none). For
    /// callers that know nothing of sections — aria2's `addUri`, a command line — where
    /// ``download(_:in:successOrFailHandler:)-([DownloadItem],_,_)`` keeps SDE's refusal.
    ///
    /// `metaInfo` gives new tasks their meta info (by URL string), recorded with the task
    /// itself: one write to the store where adding and then updating the meta info makes two.
    ///
    /// - Returns: what the engine did with each URL (added, duplicate, invalid) and the new
    ///   tasks' locations.
    @discardableResult
    public func downloadInAnyMode(
        _ items: [DownloadItem], in list: DownloadListKey = .default,
        metaInfo: [String: [String: PropertyListValue]] = [:],
        successOrFailHandler: TaskCompletionHandler? = nil
    ) -> (addition: DownloadAddition, locations: [ListIndexPath]) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let addition = engine.download(items, in: list, completion: core.deferred(successOrFailHandler))
        if !metaInfo.isEmpty {
            // In this step, before the addition's records are handed to the store (after it).
            core.state.withLock { state in
                for url in addition.added {
                    guard let info = metaInfo[url], !info.isEmpty else { continue }
                    state.extras[url, default: TaskExtras()].metaInfo.merge(info) { _, new in new }
                }
            }
        }
        let locations = place(addition.added, in: list) { (list, items) throws(DownloadListError) in
            // In manual mode this throws, and the items go to the end of the last section.
            try list.add(items)
        }
        return (addition, locations)
    }

    /// Downloads one file, or continues it: returns a handle to chain closures on or to await
    /// (Tiercel's `download(_:)?.progress { }.success { }.failure { }`, and
    /// `try await manager.download(url).value`).
    ///
    /// Idempotent: for a URL the manager already has — from this run or an earlier one — it
    /// returns a handle on that task, resuming it when it is pending, stopped, paused or failed;
    /// a finished task's handle reports its file at once. `fileName` and `checksum` apply to a
    /// new task only. In manual mode a new task goes to the end of the last section.
    ///
    /// - Throws: ``DownloadManagerError/Code/invalidURL``,
    ///   ``DownloadManagerError/Code/invalidChecksum``, ``DownloadManagerError/Code/inTrash``
    ///   (restore the task first); nothing changes then.
    @discardableResult
    public func download(
        _ urlString: String, fileName: String? = nil, checksum: String? = nil, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> DownloadTaskHandle {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        if let existing = engine.task(urlString)?.urlString ?? existingKey(of: urlString) {
            return try continueExisting(existing)
        }
        let handle = DownloadTaskHandle(urlString: urlString)
        // Attached before the task exists, so that no event of it is missed.
        let previous = core.state.withLock { state in
            let previous = state.handles[urlString]
            state.handles[urlString, default: []].append(handle)
            return previous
        }
        let addition = engine.download(
            [DownloadItem(urlString, preferredFileName: fileName, checksum: checksum)], in: list)
        guard !addition.added.isEmpty else {
            core.state.withLock { $0.handles[urlString] = previous }
            if let invalid = addition.invalid.first {
                throw DownloadManagerError(.invalidURL, "\(invalid.error)")
            }
            if let refused = addition.invalidChecksums.first {
                throw DownloadManagerError(.invalidChecksum, "\(refused.checksum): \(refused.error)")
            }
            if let duplicate = addition.duplicates.first { return try continueExisting(duplicate.existingURLString) }
            throw DownloadManagerError(.invalidURL, "\(urlString) was not added")
        }
        place(addition.added, in: list) { (list, items) throws(DownloadListError) in
            try list.add(items)
        }
        return handle
    }

    /// The key of a task the engine knows under another spelling of the same URL.
    private func existingKey(of urlString: String) -> String? {
        guard let url = try? DownloadURL(urlString) else { return nil }
        return engine.urlStrings().first { (try? DownloadURL($0))?.normalizedKey == url.normalizedKey }
    }

    /// A handle on a task the manager has, resumed unless it runs or finished.
    private func continueExisting(_ key: String) throws(DownloadManagerError) -> DownloadTaskHandle {
        let trashed = core.state.withLock { state in state.lists.values.contains { $0.isInTrash(key) } }
        if trashed { throw DownloadManagerError(.inTrash, "\(key) is in the trash: restore it first") }
        let handle = makeHandle(forTask: key)
        switch engine.state(ofTask: key) {
        case .pending, .stopped, .paused, .failed:
            if !engine.isWaiting(key) { _ = engine.resumeTasks([key]) }
        default:
            break
        }
        return handle
    }

    /// A handle on an existing task (see ``download(_:fileName:checksum:in:)``); nil for an
    /// unknown URL string. A finished or failed task's handle reports its outcome at once.
    public func handle(forTask urlString: String) -> DownloadTaskHandle? {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        guard engine.task(urlString) != nil else { return nil }
        return makeHandle(forTask: urlString)
    }

    /// Waits until each task has finished or failed (each at once when it has already) and
    /// returns the outcomes by URL string; an unknown URL string is reported as failed.
    /// Cancelling the waiting task stops the waiting, not the downloads.
    public func results(of urlStrings: [String]) async -> [String: Result<URL, FailureReason>] {
        var results: [String: Result<URL, FailureReason>] = [:]
        for url in urlStrings {
            guard let handle = handle(forTask: url) else {
                results[url] = .failure(FailureReason(.unknown, message: "\(url) is not a task of the manager"))
                continue
            }
            do throws(FailureReason) {
                results[url] = .success(try await handle.value)
            } catch {
                results[url] = .failure(error)
            }
        }
        return results
    }

    /// A new handle on a task, attached to its events, with its outcome when it ended.
    private func makeHandle(forTask urlString: String) -> DownloadTaskHandle {
        let outcome: Result<URL, FailureReason>? =
            switch engine.state(ofTask: urlString) {
            case .finished: engine.fileURL(ofTask: urlString).map { .success($0) }
            case .failed(let reason): .failure(reason)
            default: nil
            }
        let stopped = engine.state(ofTask: urlString) == .stopped
        return core.state.withLock { state in
            var halt: FailureReason?
            if stopped {
                let inTrash = state.listKey(of: urlString).flatMap { state.lists[$0] }?.isInTrash(urlString) ?? false
                halt =
                    inTrash
                    ? FailureReason(.inTrash, message: "\(urlString) is in the trash")
                    : FailureReason(.stopped, message: "\(urlString) is stopped")
            }
            let handle = DownloadTaskHandle(urlString: urlString, outcome: outcome, halt: halt)
            state.handles[urlString, default: []].append(handle)
            return handle
        }
    }

    // MARK: Adding in manual mode

    /// Inserts an empty titled section in manual mode (SDE's
    /// `insertPlaceHolderSectionInManualModeAtSection(_:withTitle:)`).
    ///
    /// - Throws: ``DownloadManagerError/Code/requiresManualMode``,
    ///   ``DownloadManagerError/Code/sectionOutOfBounds`` (`section` beyond `0 ... sectionCount`),
    ///   ``DownloadManagerError/Code/invalidArgument`` (empty title).
    public func insertPlaceholderSectionInManualMode(
        atSection section: Int, withTitle title: String, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try core.mutateList(list) { (list, _) throws(DownloadListError) in
            (try list.insertPlaceholderSection(at: section, title: title), ())
        }
    }

    /// Downloads new files as a new titled section in manual mode (SDE's
    /// `download(_:inManualModeAtSection:withTitle:)`).
    ///
    /// - Throws: as ``insertPlaceholderSectionInManualMode(atSection:withTitle:in:)``; nothing is
    ///   added then.
    /// - Returns: the new tasks' locations; empty when none was added (no section is made).
    @discardableResult
    public func download(
        _ urlStrings: [String], inManualModeAtSection section: Int, withTitle title: String,
        in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try checkManualSection(section, titles: [title], in: list)
        let added = engine.download(urlStrings, in: list).added
        return place(added, in: list) { (list, items) throws(DownloadListError) in
            try list.insert(items, atSection: section, title: title)
        }
    }

    /// Downloads several groups of new files as new titled sections in manual mode (SDE's
    /// `download(_:inManualModeAtSection:withTitles:)`).
    ///
    /// - Throws: as ``download(_:inManualModeAtSection:withTitle:in:)``, and
    ///   ``DownloadManagerError/Code/invalidArgument`` when there are fewer titles than groups.
    /// - Returns: the indexes of the sections made (a group left empty makes none).
    @discardableResult
    public func download(
        _ groups: [[String]], inManualModeAtSection section: Int, withTitles titles: [String],
        in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [Int] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        guard titles.count >= groups.count else {
            throw DownloadManagerError(.invalidArgument, "\(groups.count) groups but \(titles.count) titles")
        }
        try checkManualSection(section, titles: Array(titles.prefix(groups.count)), in: list)
        let added = Set(engine.download(groups.flatMap { $0 }, in: list).added)
        var sections: [Int] = []
        place(Array(added), in: list) { (list, items) throws(DownloadListError) in
            let byURL = Dictionary(items.map { ($0.url, $0) }, uniquingKeysWith: { first, _ in first })
            let itemGroups = groups.map { $0.compactMap { byURL[$0] } }
            let change = try list.insert(sections: itemGroups, titles: titles, atSection: section)
            sections = change.insertedSections
            return change
        }
        return sections
    }

    /// Downloads new files at a location in manual mode, in the order given (SDE's
    /// `download(_:inManualModeAt:)`).
    ///
    /// - Throws: ``DownloadManagerError/Code/requiresManualMode``,
    ///   ``DownloadManagerError/Code/indexPathOutOfBounds`` (the section must exist, the item be
    ///   in `0 ... taskCount`); nothing is added then.
    /// - Returns: the new tasks' locations.
    @discardableResult
    public func download(
        _ urlStrings: [String], inManualModeAt indexPath: ListIndexPath, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try core.state.withLock { (state) throws(DownloadManagerError) in
            let current = state.lists[list] ?? core.newList()
            guard current.sortType == .manual else {
                throw DownloadManagerError(.requiresManualMode, "the list is sorted by \(current.sortType)")
            }
            guard let count = current.taskCountInSection(indexPath.section), indexPath.item >= 0,
                indexPath.item <= count
            else {
                throw DownloadManagerError(.indexPathOutOfBounds, "no insertion point \(indexPath)")
            }
        }
        let added = engine.download(urlStrings, in: list).added
        return place(added, in: list) { (list, items) throws(DownloadListError) in
            try list.insert(items, at: indexPath)
        }
    }

    /// Checks a manual-mode section insertion before anything is added.
    func checkManualSection(_ section: Int, titles: [String], in list: DownloadListKey) throws(DownloadManagerError) {
        try core.state.withLock { (state) throws(DownloadManagerError) in
            let current = state.lists[list] ?? core.newList()
            guard current.sortType == .manual else {
                throw DownloadManagerError(.requiresManualMode, "the list is sorted by \(current.sortType)")
            }
            guard section >= 0, section <= current.sectionCount else {
                throw DownloadManagerError(
                    .sectionOutOfBounds, "section \(section) is beyond 0 ... \(current.sectionCount)")
            }
            guard !titles.contains(where: \.isEmpty) else {
                throw DownloadManagerError(.invalidArgument, "a manual-mode section needs a title")
            }
        }
    }

    /// Puts tasks the engine just added into their list with `insert`; when the list changed
    /// mode in between, where the mode allows. Returns their locations.
    @discardableResult
    func place(
        _ urls: [String], in key: DownloadListKey,
        _ insert: (inout DownloadList, [ListItem]) throws(DownloadListError) -> ListChange
    ) -> [ListIndexPath] {
        guard !urls.isEmpty else { return [] }
        // The queue reported each new task's latest record (``ManagerState/unlisted``) before
        // the engine's call returned; the engine is asked, outside the list's step, only when it
        // did not yet.
        let missing = core.state.withLock { state in urls.filter { state.unlisted[$0] == nil } }
        var fromEngine: [String: DownloadTaskRecord] = [:]
        for url in missing { fromEngine[url] = engine.task(url)?.record }
        let known = fromEngine
        let placed: (locations: [ListIndexPath], atEnd: Bool)? =
            try? core.mutateList(key) {
                (list, state) throws(DownloadListError) -> (ListChange, ([ListIndexPath], Bool)) in
                let items = urls.compactMap { url -> ListItem? in
                    guard let record = state.unlisted.removeValue(forKey: url) ?? known[url] else { return nil }
                    return core.listItem(record, state.extras[url] ?? TaskExtras())
                }
                let change: ListChange
                do {
                    change = try insert(&list, items)
                } catch {
                    change = DownloadQueue.append(items, to: &list)
                }
                let locations: [ListIndexPath] = urls.compactMap { list[$0] }
                return (change, (locations, locations.count == urls.count && Self.areLast(locations, in: list)))
            }
        // The engine queues a new task after every other: when the list put the new tasks last,
        // in the same order, the orders still agree (and a queue position a client set with the
        // engine stays). Pushing the whole order for every added task would cost O(n log n) each.
        if placed?.atEnd != true { pushOrder(key) }
        return placed?.locations ?? []
    }

    /// Whether `locations` are the last of the list's tasks (the trash aside), in this order.
    /// Complexity: O(number of sections).
    static func areLast(_ locations: [ListIndexPath], in list: DownloadList) -> Bool {
        var counts: [Int] = []
        counts.reserveCapacity(list.sectionCount)
        for section in 0..<list.sectionCount { counts.append(list.taskCountInSection(section) ?? 0) }
        // From the last location backwards, each must be the task just before the next one.
        var section = counts.count - 1
        var item = (counts.last ?? 0) - 1
        for location in locations.reversed() {
            while section >= 0, item < 0 {
                section -= 1
                if section >= 0 { item = counts[section] - 1 }
            }
            guard section >= 0, location == ListIndexPath(section: section, item: item) else { return false }
            item -= 1
        }
        return true
    }
}
