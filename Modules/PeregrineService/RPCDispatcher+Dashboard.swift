import Peregrine

/// Peregrine's methods for the web dashboard (Docs/Dashboard.md): the lists as the model has
/// them, with everything a row shows; the five sort types, sectioning, manual moves and titles;
/// stop, restart, delete for good; the trash with its rows; adding to a list and section.
///
/// Every method needs the secret, as every aria2 method does.
extension RPCDispatcher {
    /// The dashboard's methods, as `system.listMethods` lists them.
    public static let dashboardMethods = methodNames(in: .dashboard)

    /// Answers a dashboard method; `No such method` for any other name.
    func dispatchDashboard(_ method: String, _ params: RPCParameters) throws(RPCError) -> JSONValue {
        if let queue = configuration.fleetQueue {
            switch method {
            case "peregrine.lists": return [""]
            case "peregrine.listView":
                _ = try listKey(params, at: 0)
                return try fleetListView(rows: try rowLimit(params, at: 1), queue: queue)
            case "peregrine.listRevision": return try fleetListRevision(queue: queue)
            case "peregrine.restart":
                let (gid, url) = try task(try params.string(0))
                return try fleetRetry(gid: gid, url: url, queue: queue)
            case _ where Self.fleetRefusedMethods.contains(method): throw Self.fleetRefusal(method)
            default: break
            }
        }
        switch method {
        case "peregrine.lists": return .array(manager.listsForDashboard.map { .string($0.rawValue) })
        case "peregrine.listView": return listView(try listKey(params, at: 0), rows: try rowLimit(params, at: 1))
        case "peregrine.listRevision": return .integer(listRevision.current)
        case "peregrine.setSort": return try setSort(params)
        case "peregrine.setSectioning": return try setSectioning(params)
        case "peregrine.moveTask": return try moveTask(params)
        case "peregrine.renameSection": return try renameSection(params)
        case "peregrine.insertSection": return try insertSection(params)
        case "peregrine.stop": return try stop(params)
        case "peregrine.restart": return try restart(params)
        case "peregrine.delete": return try deleteTask(params)
        case "peregrine.trashView": return trashView(try listKey(params, at: 0))
        case "peregrine.untrash": return try untrash(params)
        case "peregrine.cleanUp": return try cleanUp(params)
        case "peregrine.addUris": return try addUris(params)
        default: throw RPCError.noSuchMethod(method)
        }
    }

    /// An optional list name parameter (`""`, or absent, is the default list); an unknown name
    /// is refused.
    private func listKey(_ params: RPCParameters, at index: Int) throws(RPCError) -> DownloadListKey {
        guard params[index] != nil else { return .default }
        let key = DownloadListKey(try params.string(index))
        guard key == .default || manager.lists.contains(key) else { throw RPCError("No list named \(key.rawValue).") }
        return key
    }

    /// An optional limit of rows (absent: every row); a negative one or one that is not an
    /// integer is refused.
    private func rowLimit(_ params: RPCParameters, at index: Int) throws(RPCError) -> Int? {
        guard params[index] != nil else { return nil }
        let limit = try params.integer(index)
        guard limit >= 0 else { throw RPCError("The row limit must not be negative.") }
        return limit
    }

    // MARK: Reading

    /// The fields of a row of `peregrine.listView`, in their order.
    static let rowFields: [JSONValue] = ["gid", "name", "status", "total", "done", "kind", "speed"]

    /// `peregrine.listView([list[, rows]])`: the list as the model has it, every row with what
    /// the dashboard shows — `{list, revision, complete, sortType, sortOrder, sectioning:
    /// {addTime, fileSize, fileNameIndex}, fields, sections: [{title, count, downloads: [[gid,
    /// name, status, total, done, kind, speed]]}]}`. A row is an array in the order of `fields`
    /// (a third of the serializing work of an object with 10,000 rows); numbers are JSON
    /// numbers. URLs are left out (the longest strings of a row, shown only on demand:
    /// `aria2.getUris`).
    ///
    /// With `rows`, only the first that many rows of the list (in section order) are given;
    /// every section still has its `count`, and `complete` is false when rows were left out.
    /// The dashboard asks for a screenful so, then for the rest: its first frame does not wait
    /// for 10,000 rows.
    func listView(_ key: DownloadListKey, rows limit: Int? = nil) -> JSONValue {
        let revision = listRevision.current
        let list = manager.list(key)
        var sections: [JSONValue] = []
        sections.reserveCapacity(list.sectionCount)
        var budget = limit ?? Int.max
        var complete = true
        for (index, urls) in list.downloadList.enumerated() {
            let title = index < list.sectionTitles.count ? list.sectionTitles[index] : ""
            let given = urls.prefix(budget)
            budget -= given.count
            if given.count < urls.count { complete = false }
            sections.append([
                "title": .string(title), "count": .integer(Int64(urls.count)),
                "downloads": .array(given.map { .array(row(url: $0, in: list)) }),
            ])
        }
        return [
            "list": .string(key.rawValue), "revision": .integer(revision), "complete": .bool(complete),
            "sortType": .string(list.sortType.rawValue), "sortOrder": .string(list.sortOrder.rawValue),
            "sectioning": [
                "addTime": .bool(list.sectioning.contains(.addTime)),
                "fileSize": .bool(list.sectioning.contains(.fileSize)),
                "fileNameIndex": .bool(list.sectioning.contains(.fileNameIndex)),
            ],
            "fields": .array(Self.rowFields), "sections": .array(sections),
        ]
    }

    /// `peregrine.trashView([list])`: the trash's rows, most recently trashed first, as objects
    /// with the keys of `listView`'s `fields` and `url`.
    func trashView(_ key: DownloadListKey) -> JSONValue {
        let list = manager.list(key)
        return .array(
            list.toDeleteList.map { url in
                var object = JSONObject()
                for (field, value) in zip(Self.rowFields, row(url: url, in: list)) {
                    if let name = field.stringValue { object[name] = value }
                }
                object["url"] = .string(url)
                return .object(object)
            })
    }

    /// One row: what a list shows of a task, in the order of ``rowFields``.
    private func row(url: String, in list: DownloadList) -> [JSONValue] {
        let gid = JSONValue.string(gid(of: url).description)
        let item = list.item(for: url)
        let kind = JSONValue.string(item?.kind.rawValue ?? "Other")
        guard let snapshot = manager.engine.task(url) else {
            return [gid, .string(item?.fileName ?? url), "removed", 0, 0, kind, 0]
        }
        let status = status(of: snapshot)
        let total = snapshot.record.expectedLength ?? (item?.fileSize ?? 0)
        let done = status == .complete ? max(snapshot.receivedBytes, total) : snapshot.receivedBytes
        return [
            gid, .string(manager.fileDisplayName(ofTask: url) ?? item?.fileName ?? url), .string(status.rawValue),
            .integer(max(0, total)), .integer(done), kind, .integer(status == .active ? speed(of: url) : 0),
        ]
    }

    // MARK: The list model

    /// `peregrine.setSort(type[, order[, list]])`: any of the five sort types — `manual`,
    /// `addTime`, `fileName`, `fileSize`, `fileType` — `ascending` or `descending`.
    func setSort(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let typeName = try params.string(0)
        guard let type = ListSortType(rawValue: typeName) else { throw RPCError("Unknown sort type \(typeName).") }
        var order = ListSortOrder.ascending
        if params[1] != nil {
            let orderName = try params.string(1)
            guard let parsed = ListSortOrder(rawValue: orderName) else { throw RPCError("Unknown order \(orderName).") }
            order = parsed
        }
        manager.sortListBy(type: type, order: order, in: try listKey(params, at: 2))
        return "OK"
    }

    /// `peregrine.setSectioning({addTime, fileSize, fileNameIndex}[, list])`: which predefined
    /// sort types split the list into sections; a name left out keeps its setting.
    func setSectioning(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        guard case .object(let members) = params[0] else { throw RPCError.wrongType(at: 0) }
        let key = try listKey(params, at: 1)
        var sectioning = manager.list(key).sectioning
        let options: [(String, ListSectioning)] = [
            ("addTime", .addTime), ("fileSize", .fileSize), ("fileNameIndex", .fileNameIndex),
        ]
        for (name, option) in options {
            switch members[name] {
            case nil: continue
            case .bool(true): sectioning.insert(option)
            case .bool(false): sectioning.remove(option)
            default: throw RPCError("The sectioning option \(name) takes true or false.")
            }
        }
        manager.setSectioning(sectioning, in: key)
        return "OK"
    }

    /// `peregrine.moveTask(gid, section, item[, list])`: in manual mode, moves a download to
    /// that place (within its section or into another one).
    func moveTask(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (gid, url) = try task(try params.string(0))
        let target = ListIndexPath(section: try params.integer(1), item: try params.integer(2))
        let key = try listKey(params, at: 3)
        guard let source = manager.list(key).indexPath(ofTask: url) else {
            throw RPCError("GID#\(gid) is not in that list.")
        }
        do throws(DownloadManagerError) {
            try manager.moveTask(at: source, to: target, in: key)
        } catch {
            throw Self.error(error)
        }
        return "OK"
    }

    /// `peregrine.renameSection(section, title[, list])`: in manual mode.
    func renameSection(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let section = try params.integer(0)
        let title = try params.string(1)
        let key = try listKey(params, at: 2)
        do throws(DownloadManagerError) {
            try manager.changeTitleOfSection(section, to: title, in: key)
        } catch {
            throw Self.error(error)
        }
        return "OK"
    }

    /// `peregrine.insertSection(section, title[, list])`: in manual mode, a new empty section.
    func insertSection(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let section = try params.integer(0)
        let title = try params.string(1)
        let key = try listKey(params, at: 2)
        do throws(DownloadManagerError) {
            try manager.insertPlaceholderSectionInManualMode(atSection: section, withTitle: title, in: key)
        } catch {
            throw Self.error(error)
        }
        return "OK"
    }

    // MARK: Tasks

    /// `peregrine.stop(gid)`: stops the transfer (with its resume record) without marking the
    /// download paused by a client: the service continues it after a restart, as Peregrine's
    /// `stop` does.
    func stop(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (gid, url) = try task(try params.string(0))
        do throws(DownloadManagerError) {
            _ = try manager.stopTasks([url])
        } catch {
            throw Self.error(error)
        }
        notify("aria2.onDownloadPause", gid: gid)
        return .string(gid.description)
    }

    /// `peregrine.restart(gid)`: downloads again from the first byte (a failed, complete,
    /// stopped or paused download alike).
    func restart(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (gid, url) = try task(try params.string(0))
        setPausedByClient(false, gid: gid, url: url)
        state.withLock { _ = $0.stopOrder.removeValue(forKey: gid) }
        do throws(DownloadManagerError) {
            _ = try manager.restartTasks([url])
        } catch {
            throw Self.error(error)
        }
        return .string(gid.description)
    }

    /// `peregrine.delete(gid)`: deletes a download for good, with its file (finished or not),
    /// from the list or from the trash.
    func deleteTask(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (gid, url) = try task(try params.string(0))
        let wasActive = status(of: url) == .active
        try deleteForGood(url, keepFinishedFile: false)
        if manager.engine.task(url) != nil { try cleanUpTrashed(url) }
        forgetForGood(gid: gid, url: url)
        if wasActive { notify("aria2.onDownloadStop", gid: gid) }
        return .string(gid.description)
    }

    /// `peregrine.cleanUp(gid)`: deletes a download in the trash for good, with its files.
    func cleanUp(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (gid, url) = try task(try params.string(0))
        guard manager.indexPath(ofTask: url) == nil else { throw RPCError("GID#\(gid) is not in the trash.") }
        try cleanUpTrashed(url)
        forgetForGood(gid: gid, url: url)
        return .string(gid.description)
    }

    /// `peregrine.untrash(gid)`: puts a download back from the trash of whichever list holds
    /// it, at the top of that list, in its former state.
    func untrash(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (gid, url) = try task(try params.string(0))
        guard let key = manager.listsForDashboard.first(where: { manager.list($0).isInTrash(url) }) else {
            throw RPCError("GID#\(gid) is not in the trash.")
        }
        do throws(DownloadManagerError) {
            _ = try manager.restoreToDeleteTasks([url], in: key)
        } catch {
            throw Self.error(error)
        }
        return .string(gid.description)
    }

    /// Deletes a trashed task for good from whichever list's trash holds it.
    private func cleanUpTrashed(_ url: String) throws(RPCError) {
        let key = manager.listsForDashboard.first { manager.list($0).isInTrash(url) } ?? .default
        do throws(DownloadManagerError) {
            _ = try manager.cleanupToDeleteTasks([url], in: key)
        } catch {
            throw Self.error(error)
        }
    }

    /// Forgets what the service kept of a download deleted for good.
    private func forgetForGood(gid: GID, url: String) {
        state.withLock { state in
            state.table.remove(url: url)
            state.options[gid] = nil
            state.paused.remove(gid)
            state.stopOrder[gid] = nil
            state.meters[url] = nil
        }
        configuration.requestTable?.remove(task: url)
    }

    // MARK: Adding

    /// `peregrine.addUris(uris[, {checksum, list, section, pause}])`: one download per URI, into
    /// a list (default: the default list) and, in manual mode, a section (default: the last).
    /// Answers one entry per URI, in order: `{gid}` (also for a URI the service had already,
    /// with `existing: true`) or `{error}`; one refused URI does not stop the others.
    func addUris(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        guard let uris = try params.strings(0) else { throw RPCError.missing(at: 0) }
        guard uris.count <= configuration.limits.maxBatchCount else {
            throw RPCError("At most \(configuration.limits.maxBatchCount) URIs per call.")
        }
        var options = JSONObject()
        if let value = params[1] {
            guard case .object(let members) = value else { throw RPCError.wrongType(at: 1) }
            options = members
        }
        let checksum = options["checksum"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if checksum != nil, uris.count > 1 { throw RPCError("A checksum names one file: give one URI with it.") }
        let key = DownloadListKey(options["list"]?.stringValue ?? "")
        let pause = options["pause"] == .bool(true)
        let section = options["section"]?.integerValue.map { Int($0) }
        if let queue = configuration.fleetQueue {
            // A fleet's queue keeps no lists, sections or paused marks: refused, not dropped.
            guard key == DownloadListKey(""), section == nil, !pause else {
                throw RPCError("A fleet's shared queue keeps no lists, sections or paused downloads.")
            }
            let carried = DownloadOptions(checksum.map { ["checksum": $0] } ?? [:])
            return .array(
                uris.map { uri in
                    do throws(RPCError) {
                        let gid = try addToFleet(
                            uri, options: carried, fileName: nil, subdirectory: nil, mirrors: [], position: nil,
                            queue: queue)
                        return ["uri": .string(uri), "gid": gid]
                    } catch {
                        return ["uri": .string(uri), "error": .string(error.message)]
                    }
                })
        }
        return .array(
            uris.map { uri in
                do throws(RPCError) {
                    return try add(uri, checksum: checksum, key: key, section: section, pause: pause)
                } catch {
                    return ["uri": .string(uri), "error": .string(error.message)]
                }
            })
    }

    private func add(_ uri: String, checksum: String?, key: DownloadListKey, section: Int?, pause: Bool)
        throws(RPCError) -> JSONValue
    {
        if let existing = manager.engine.task(uri)?.urlString {
            return ["uri": .string(uri), "gid": .string(gid(of: existing).description), "existing": true]
        }
        let list = manager.list(key)
        if list.sortType == .manual, checksum != nil {
            throw RPCError("A checksum cannot be given in manual mode (sort the list first).")
        }
        var added: String?
        var addition: DownloadAddition?
        do throws(DownloadManagerError) {
            if list.sortType == .manual {
                let target = min(max(0, section ?? list.sectionCount - 1), max(0, list.sectionCount - 1))
                let item = list.taskCountInSection(target) ?? 0
                let locations = try manager.download(
                    [uri], inManualModeAt: ListIndexPath(section: target, item: item), in: key)
                added = locations.first.flatMap { manager.downloadURLString(at: $0, in: key) }
            } else {
                addition = try manager.download([DownloadItem(uri, checksum: checksum)], in: key).addition
            }
        } catch {
            throw Self.error(error)
        }
        if let addition {
            if let invalid = addition.invalid.first { throw RPCError("Invalid URI \(uri): \(invalid.error)") }
            if let refused = addition.invalidChecksums.first {
                throw RPCError.badOption("checksum", "\(refused.error)")
            }
            if let duplicate = addition.duplicates.first {
                let gid = gid(of: duplicate.existingURLString)
                return ["uri": .string(uri), "gid": .string(gid.description), "existing": true]
            }
            added = addition.added.first
        }
        guard let added else { throw RPCError("\(uri) was not added.") }
        let gid = gid(of: added)
        if pause {
            setPausedByClient(true, gid: gid, url: added)
        } else if manager.engine.task(added)?.state == .pending, !manager.engine.isWaiting(added) {
            _ = try? manager.resumeTasks([added])
        }
        return ["uri": .string(uri), "gid": .string(gid.description)]
    }

    // MARK: Revisions

    /// Counts the changes of the lists' shape — rows added, moved, trashed, restored, deleted,
    /// renamed — so that a dashboard asks for a list again only when it changed. State and
    /// progress changes do not count: they come as notifications and `tellStatus`.
    func followListChanges(_ events: AsyncStream<DownloadManagerEvent>) async {
        for await event in events {
            switch event {
            case .listChanged, .trashed, .restoredFromTrash, .cleanedUp, .displayNameChanged, .restoredAfterForcedQuit:
                listRevision.bump()
            case .task(.added), .task(.deleted):
                listRevision.bump()
            default:
                break
            }
        }
    }
}

extension DownloadManager {
    /// The lists, the default one first and always there.
    var listsForDashboard: [DownloadListKey] {
        [.default] + lists.filter { $0 != .default }
    }
}
