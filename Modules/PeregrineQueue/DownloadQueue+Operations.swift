extension DownloadQueue {
    /// An operation the engine carries out on tasks by URL.
    enum TaskOperation {
        case resume(TaskCompletionHandler?)
        case pause
        case stop
        case restart(TaskCompletionHandler?)
        case deleteFiles
    }
}

extension DownloadQueueing {
    /// Runs an operation in the engine and returns the tasks it changed.
    func run(_ operation: DownloadQueue.TaskOperation, _ urls: [String]) -> [String] {
        guard !urls.isEmpty else { return [] }
        let result: TaskOperationResult =
            switch operation {
            case .resume(let completion): engine.resumeTasks(urls, completion: core.deferred(completion))
            case .pause: engine.pauseTasks(urls)
            case .stop: engine.stopTasks(urls)
            case .restart(let completion): engine.restartTasks(urls, completion: core.deferred(completion))
            case .deleteFiles: engine.deleteFilesOfTasks(urls)
            }
        switch operation {
        case .resume, .restart:
            let handles = core.state.withLock { state in result.changed.flatMap { state.handles[$0] ?? [] } }
            for handle in handles { handle.rearm() }
        case .pause, .stop, .deleteFiles:
            break
        }
        return result.changed
    }

    /// Throws unless every URL is a task in a list (not in the trash).
    func requireListed(_ urls: [String]) throws(DownloadManagerError) {
        try core.state.withLock { (state) throws(DownloadManagerError) in
            for url in urls {
                guard state.location(of: url) != nil else { throw DownloadManagerError.unknown(url) }
            }
        }
    }

    /// The URL strings at locations of a list.
    func urls(at indexPaths: [ListIndexPath], in key: DownloadListKey) throws(DownloadManagerError) -> [String] {
        do {
            return try core.state.withLock { (state) throws(DownloadListError) in
                try (state.lists[key] ?? core.newList()).tasks(at: indexPaths)
            }
        } catch {
            throw DownloadManagerError(error)
        }
    }

    /// The URL strings of a section of a list.
    func urls(inSection section: Int, in key: DownloadListKey) throws(DownloadManagerError) -> [String] {
        do {
            return try core.state.withLock { (state) throws(DownloadListError) in
                try (state.lists[key] ?? core.newList()).tasks(inSection: section)
            }
        } catch {
            throw DownloadManagerError(error)
        }
    }

    /// The current locations of tasks (those still in the list), in the order given.
    func locations(of urls: [String]) -> [ListIndexPath] {
        core.state.withLock { state in
            urls.compactMap { state.location(of: $0) }
        }
    }

    /// The tasks of a list that are not finished, in list order.
    func unfinished(in key: DownloadListKey) -> [String] {
        let urls = core.state.withLock { state in state.lists[key]?.downloadList.flatMap { $0 } ?? [] }
        return urls.filter { engine.state(ofTask: $0) != .finished }
    }

    // MARK: By URL

    /// Resumes tasks that are pending, paused, stopped or failed (SDE's `resumeTasks(_:)`); a task
    /// beyond its list's ``maxDownloadCount`` waits in the queue (and counts as resumed).
    ///
    /// - Throws: ``DownloadManagerError/Code/unknownTask`` when a URL is not in a list (a task in
    ///   the trash must be restored first); nothing changes then.
    /// - Returns: the tasks resumed; tasks whose state does not allow it are left out.
    @discardableResult
    public func resumeTasks(
        _ urlStrings: [String], successOrFailHandler: TaskCompletionHandler? = nil
    ) throws(DownloadManagerError) -> [String] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try requireListed(urlStrings)
        return run(.resume(successOrFailHandler), urlStrings)
    }

    /// Pauses downloading tasks (SDE's `pauseTasks(_:)`): they keep their connection with
    /// ``pauseDownloadBySuspendingSessionTask``, else stop with a resume record.
    ///
    /// - Throws: ``DownloadManagerError/Code/unknownTask``; nothing changes then.
    /// - Returns: the tasks paused.
    @discardableResult
    public func pauseTasks(_ urlStrings: [String]) throws(DownloadManagerError) -> [String] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try requireListed(urlStrings)
        return run(.pause, urlStrings)
    }

    /// Stops downloading and paused tasks and takes waiting ones out of the queue (SDE's
    /// `stopTasks(_:)`), keeping resume records.
    ///
    /// - Throws: ``DownloadManagerError/Code/unknownTask``; nothing changes then.
    /// - Returns: the tasks stopped.
    @discardableResult
    public func stopTasks(_ urlStrings: [String]) throws(DownloadManagerError) -> [String] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try requireListed(urlStrings)
        return run(.stop, urlStrings)
    }

    /// Downloads finished, stopped or failed tasks again from the first byte, deleting the file
    /// or partial file first (SDE's `restartTasks(_:)`).
    ///
    /// - Throws: ``DownloadManagerError/Code/unknownTask``; nothing changes then.
    /// - Returns: the tasks restarted.
    @discardableResult
    public func restartTasks(
        _ urlStrings: [String], successOrFailHandler: TaskCompletionHandler? = nil
    ) throws(DownloadManagerError) -> [String] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try requireListed(urlStrings)
        return run(.restart(successOrFailHandler), urlStrings)
    }

    /// Deletes tasks' files (finished or partial) and keeps the tasks, `pending` (SDE's
    /// `deleteFilesOfTasks(_:)`; a pending task counts as changed).
    ///
    /// - Throws: ``DownloadManagerError/Code/unknownTask``; nothing changes then.
    /// - Returns: the tasks whose files were deleted.
    @discardableResult
    public func deleteFilesOfTasks(_ urlStrings: [String]) throws(DownloadManagerError) -> [String] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try requireListed(urlStrings)
        let changed = run(.deleteFiles, urlStrings)
        downloadQueue.filesDidGo?(changed, false)
        callDeleteHandler(changed.map { ($0, ListIndexPath(section: 0, item: 0)) })
        return changed
    }

    /// Deletes tasks (SDE's `deleteTasks(_:keepFinishedFile:)`): into the trash when
    /// ``isTrashOpened`` (their transfers stop, their files stay until cleaned up), else for good
    /// with their temporary files, and their finished files unless `keepFinishedFile`.
    ///
    /// - Throws: ``DownloadManagerError/Code/unknownTask``; nothing changes then.
    /// - Returns: each deleted task's former location.
    @discardableResult
    public func deleteTasks(
        _ urlStrings: [String], keepFinishedFile: Bool = false
    ) throws(DownloadManagerError) -> [String: ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        try requireListed(urlStrings)
        return delete(urlStrings, keepFinishedFile: keepFinishedFile)
    }

    // MARK: By location

    /// Resumes the tasks at locations of a list; see ``resumeTasks(_:successOrFailHandler:)``.
    ///
    /// - Throws: ``DownloadManagerError/Code/indexPathOutOfBounds``; nothing changes then.
    /// - Returns: the locations of the tasks resumed.
    @discardableResult
    public func resumeTasks(
        at indexPaths: [ListIndexPath], in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return locations(of: run(.resume(nil), try urls(at: indexPaths, in: list)))
    }

    /// Pauses the tasks at locations; see ``pauseTasks(_:)``.
    @discardableResult
    public func pauseTasks(
        at indexPaths: [ListIndexPath], in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return locations(of: run(.pause, try urls(at: indexPaths, in: list)))
    }

    /// Stops the tasks at locations; see ``stopTasks(_:)``.
    @discardableResult
    public func stopTasks(
        at indexPaths: [ListIndexPath], in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return locations(of: run(.stop, try urls(at: indexPaths, in: list)))
    }

    /// Restarts the tasks at locations; see ``restartTasks(_:successOrFailHandler:)``.
    @discardableResult
    public func restartTasks(
        at indexPaths: [ListIndexPath], in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return locations(of: run(.restart(nil), try urls(at: indexPaths, in: list)))
    }

    /// Deletes the files of the tasks at locations; see ``deleteFilesOfTasks(_:)``.
    @discardableResult
    public func deleteFilesOfTasks(
        at indexPaths: [ListIndexPath], in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let changed = run(.deleteFiles, try urls(at: indexPaths, in: list))
        downloadQueue.filesDidGo?(changed, false)
        let located = zip(changed, locations(of: changed)).map { ($0, $1) }
        callDeleteHandler(located)
        return located.map(\.1)
    }

    /// Deletes the tasks at locations; see ``deleteTasks(_:keepFinishedFile:)``.
    @discardableResult
    public func deleteTasks(
        at indexPaths: [ListIndexPath], keepFinishedFile: Bool = false, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [String: ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return delete(try urls(at: indexPaths, in: list), keepFinishedFile: keepFinishedFile)
    }

    // MARK: By section

    /// Resumes the tasks of a section (SDE's `resumeTasksInSection(_:)`).
    ///
    /// - Throws: ``DownloadManagerError/Code/sectionOutOfBounds``; nothing changes then.
    @discardableResult
    public func resumeTasksInSection(
        _ section: Int, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return locations(of: run(.resume(nil), try urls(inSection: section, in: list)))
    }

    /// Pauses the tasks of a section (SDE's `pauseTasksInSection(_:)`).
    @discardableResult
    public func pauseTasksInSection(
        _ section: Int, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return locations(of: run(.pause, try urls(inSection: section, in: list)))
    }

    /// Stops the tasks of a section (SDE's `stopTasksInSection(_:)`).
    @discardableResult
    public func stopTasksInSection(
        _ section: Int, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return locations(of: run(.stop, try urls(inSection: section, in: list)))
    }

    /// Restarts the tasks of a section (SDE's `restartTasksInSection(_:)`).
    @discardableResult
    public func restartTasksInSection(
        _ section: Int, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return locations(of: run(.restart(nil), try urls(inSection: section, in: list)))
    }

    /// Deletes the files of the tasks of a section (SDE's `deleteFilesOfTasksInSection(_:)`).
    @discardableResult
    public func deleteFilesOfTasksInSection(
        _ section: Int, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let changed = run(.deleteFiles, try urls(inSection: section, in: list))
        downloadQueue.filesDidGo?(changed, false)
        let located = zip(changed, locations(of: changed)).map { ($0, $1) }
        callDeleteHandler(located)
        return located.map(\.1)
    }

    /// Deletes the tasks of a section (SDE's `deleteTasksInSection(_:keepFinishedFile:)`). In
    /// manual mode the section stays, empty.
    @discardableResult
    public func deleteTasksInSection(
        _ section: Int, keepFinishedFile: Bool = false, in list: DownloadListKey = .default
    ) throws(DownloadManagerError) -> [String: ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return delete(try urls(inSection: section, in: list), keepFinishedFile: keepFinishedFile)
    }

    // MARK: All tasks

    /// Resumes every unfinished task of a list, in list order; those beyond the limit wait
    /// (SDE's `resumeAllTasks(underLimit:)`). With `underLimit` false the limit is lifted first.
    ///
    /// - Returns: the tasks resumed.
    @discardableResult
    public func resumeAllTasks(underLimit: Bool = true, in list: DownloadListKey = .default) -> [String] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        if !underLimit { maxDownloadCount = 0 }
        return run(.resume(nil), unfinished(in: list))
    }

    /// Pauses every downloading task and empties the queue; stops them instead when
    /// ``pauseDownloadBySuspendingSessionTask`` is off (SDE's `pauseAllTasks()`).
    @discardableResult
    public func pauseAllTasks(in list: DownloadListKey = .default) -> [String] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return engine.pauseAllTasks(in: list)
    }

    /// Stops every downloading and paused task and empties the queue (SDE's `stopAllTasks()`).
    @discardableResult
    public func stopAllTasks(in list: DownloadListKey = .default) -> [String] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        return engine.stopAllTasks(in: list)
    }

    /// Deletes every task of a list (SDE's `deleteAllTasks(_:)`), into the trash when
    /// ``isTrashOpened``.
    @discardableResult
    public func deleteAllTasks(
        keepFinishedFile: Bool = false, in list: DownloadListKey = .default
    ) -> [String: ListIndexPath] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let urls = core.state.withLock { $0.lists[list]?.downloadList.flatMap { $0 } ?? [] }
        return delete(urls, keepFinishedFile: keepFinishedFile)
    }

    /// Deletes the files of every task of a list, keeping the tasks (SDE's
    /// `deleteFilesOfAllTasks()`).
    @discardableResult
    public func deleteFilesOfAllTasks(in list: DownloadListKey = .default) -> [String] {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        let urls = core.state.withLock { $0.lists[list]?.downloadList.flatMap { $0 } ?? [] }
        let changed = run(.deleteFiles, urls)
        downloadQueue.filesDidGo?(changed, false)
        callDeleteHandler(zip(changed, locations(of: changed)).map { ($0, $1) })
        return changed
    }

    /// Ends every transfer without changing states (Reed's `shutDown()`, for a logout).
    public func shutDown() {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        engine.shutDown()
    }

    /// Starts again after ``shutDown()``.
    public func startUp() {
        core.coordinator.enter()
        defer { core.coordinator.leave() }
        engine.startUp()
    }

    // MARK: Deleting

    /// Deletes listed tasks, into the trash or for good; returns their former locations.
    func delete(_ urlStrings: [String], keepFinishedFile: Bool) -> [String: ListIndexPath] {
        var seen: Set<String> = []
        let urls = urlStrings.filter { seen.insert($0).inserted }
        guard !urls.isEmpty else { return [:] }
        // Where each task is listed, read before the engine deletes its record.
        let (trash, locations, lists) = core.state.withLock {
            state -> (Bool, [String: ListIndexPath], [String: DownloadListKey]) in
            var locations: [String: ListIndexPath] = [:]
            var lists: [String: DownloadListKey] = [:]
            for url in urls {
                if let key = state.listKey(of: url), let location = state.lists[key]?[url] {
                    locations[url] = location
                    lists[url] = key
                }
            }
            return (state.isTrashOpened, locations, lists)
        }
        let removed: [String]
        if trash {
            removed = urls.filter { locations[$0] != nil }
            _ = engine.stopTasks(urls)
        } else {
            removed = engine.deleteTasks(urls, keepFinishedFile: keepFinishedFile).changed
        }
        // An await ends with the trash or the deletion, not with the stop on the way there, and
        // only once the operation is done: the engine's events of this step reach the handles
        // after it (the deletion's finds them gone with the task).
        let handles = core.state.withLock { state in removed.flatMap { state.handles[$0] ?? [] } }
        if !handles.isEmpty {
            let code: FailureReason.Code = trash ? .inTrash : .deleted
            let reason: @Sendable (DownloadTaskHandle) -> FailureReason = { handle in
                FailureReason(code, message: "\(handle.urlString) was \(trash ? "moved to the trash" : "deleted")")
            }
            for handle in handles { handle.expectHalt(reason(handle)) }
            core.coordinator.afterStep {
                for handle in handles { handle.halt(reason(handle)) }
            }
        }
        // The order of the tasks that stay does not change, and tasks in the trash are stopped:
        // the engine's queue needs no new order (pushing the list's would also undo a queue
        // position a client set with the engine, as aria2.changePosition does).
        removeFromLists(removed, of: lists, toTrash: trash, keepFinishedFile: keepFinishedFile)
        if trash {
            if !removed.isEmpty { core.announce([.trashed(removed)]) }
        } else {
            downloadQueue.filesDidGo?(removed, true)
        }
        var result: [String: ListIndexPath] = [:]
        for url in removed { result[url] = locations[url] }
        callDeleteHandler(removed.compactMap { url in locations[url].map { (url, $0) } })
        return result
    }

    /// Takes tasks out of their lists (`lists` says which; into the trash, or for good with their
    /// extras).
    func removeFromLists(
        _ urls: [String], of lists: [String: DownloadListKey], toTrash: Bool, keepFinishedFile: Bool
    ) {
        let byList = Dictionary(grouping: urls.filter { lists[$0] != nil }) { lists[$0]! }
        for (key, group) in byList {
            try? core.mutateList(key) { (list, state) throws(DownloadListError) in
                let present = group.filter { list[$0] != nil }
                for url in group {
                    if toTrash {
                        if keepFinishedFile {
                            state.trashKeepsFinishedFile.insert(url)
                        } else {
                            state.trashKeepsFinishedFile.remove(url)
                        }
                    } else {
                        state.extras[url] = nil
                        state.handles[url] = nil
                    }
                }
                return (try list.remove(present, moveToTrash: toTrash), ())
            }
        }
    }

    /// Calls the delete handler once per deleted task, then resets it, as SDE does.
    func callDeleteHandler(_ deleted: [(String, ListIndexPath)]) {
        let handler = core.state.withLock { state in
            let handler = state.deleteCompletionHandler
            state.deleteCompletionHandler = nil
            return handler
        }
        guard let handler else { return }
        core.coordinator.afterStep {
            for (index, (url, location)) in deleted.enumerated() {
                handler(url, location, deleted.count, index + 1)
            }
        }
    }
}
