extension DownloadEngine {
    /// Changes how many connections a task may use (clamped to 1…64; nil for the engine's
    /// ``Segmentation/maxConnectionsPerTask``), as `aria2.changeOption` changes `split`. The
    /// count is saved with the task's record. A downloading task starts its transfer again to
    /// use it — stopped with its resume record and resumed at once, so it continues from what
    /// is synced (as aria2 restarts an active download whose split changes); other tasks use it
    /// when they next start.
    ///
    /// - Returns: whether the task exists.
    @discardableResult
    public func setMaxConnections(_ count: Int?, forTask urlString: String) -> Bool {
        let clamped = count.map {
            min(max($0, Segmentation.connectionRange.lowerBound), Segmentation.connectionRange.upperBound)
        }
        return perform { state, effects in
            guard let entry = state.tasks[urlString] else { return false }
            guard entry.record.maxConnections != clamped else { return true }
            state.tasks[urlString]!.record.maxConnections = clamped
            effects.markDirty(urlString)
            if entry.machine.state == .downloading {
                try? transition(urlString, .stop, &state, &effects)
                try? transition(
                    urlString, .resume(slotAvailable: slotAvailable(for: urlString, state)), &state, &effects)
            }
            return true
        }
    }
}

extension DownloadEngine {
    /// Replaces a task's mirrors (other URLs of the same file, see ``DownloadItem/mirrors``),
    /// saved with its record. Duplicates of the task's URL or of each other are dropped. A
    /// running transfer goes on with the sources it has; the next transfer uses the new ones.
    ///
    /// - Returns: whether the task exists.
    /// - Throws: the first mirror's error that is no URL Peregrine can download; nothing changes.
    @discardableResult
    public func setMirrors(_ mirrors: [String], forTask urlString: String) throws(URLValidationError) -> Bool {
        guard let url = state.withLock({ $0.tasks[urlString]?.url }) else { return false }
        let checked = try Self.mirrors(mirrors, of: url)
        return perform { state, effects in
            guard let entry = state.tasks[urlString] else { return false }
            guard entry.record.mirrors != checked else { return true }
            entry.record.mirrors = checked
            effects.markDirty(urlString)
            return true
        }
    }
}

extension DownloadEngine {
    /// Moves where a task that has not finished places its file: `subdirectory` is a folder
    /// inside the download directory (see ``DownloadItem/subdirectory``), nil for the directory
    /// itself (aria2's `changeOption` of `dir`). A finished file stays where it is.
    ///
    /// - Returns: whether the folder is the task's now: false for an unknown or finished task,
    ///   or a folder that is no relative path of plain names.
    @discardableResult
    public func setSubdirectory(_ subdirectory: String?, forTask urlString: String) -> Bool {
        var normalized: String?
        if let subdirectory {
            guard let plain = DownloadDirectory.normalizedSubdirectory(subdirectory) else { return false }
            normalized = plain.isEmpty ? nil : plain
        }
        return perform { state, effects in
            guard let entry = state.tasks[urlString], entry.machine.state != .finished else { return false }
            guard entry.record.subdirectory != normalized else { return true }
            let base = entry.record.baseFileName
            entry.record.subdirectory = normalized
            if let base { entry.record.fileName = entry.record.inSubdirectory(base) }
            effects.markDirty(urlString)
            return true
        }
    }

    /// Gives a task that has not finished another name for its file (a rerun of `peregrine get`
    /// with another `-o`, aria2's `changeOption` of `out`): the file takes it when it is placed,
    /// sanitised as a name given by the user is. A finished file keeps the name it has.
    ///
    /// - Returns: whether the name is the task's now: false for an unknown or finished task,
    ///   or a name that sanitises to nothing.
    @discardableResult
    public func setPreferredFileName(_ name: String, forTask urlString: String) -> Bool {
        guard let chosen = FileNameSanitizer.cleanChosen(name) else { return false }
        return perform { state, effects in
            guard let entry = state.tasks[urlString], entry.machine.state != .finished else { return false }
            guard entry.record.preferredFileName != name else { return true }
            entry.record.preferredFileName = name
            // A name taken from the response already: the chosen one wins, as it does before.
            if entry.record.fileName != nil { entry.record.fileName = entry.record.inSubdirectory(chosen) }
            effects.markDirty(urlString)
            return true
        }
    }
}
