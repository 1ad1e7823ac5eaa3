import Peregrine

extension RPCDispatcher {
    /// `peregrine.list()`: the default list as the facade sorts and sections it —
    /// `{sortType, sortOrder, sections: [{title, downloads: [{gid, url, displayName, status}]}]}`.
    func peregrineList() -> JSONValue {
        let list = manager.list()
        var sections: [JSONValue] = []
        for (index, urls) in list.downloadList.enumerated() {
            let title = index < list.sectionTitles.count ? list.sectionTitles[index] : ""
            let downloads: [JSONValue] = urls.map { url in
                [
                    "gid": .string(gid(of: url).description), "url": .string(url),
                    "displayName": .string(manager.fileDisplayName(ofTask: url) ?? ""),
                    "status": .string(status(of: url).rawValue),
                ]
            }
            sections.append(["title": .string(title), "downloads": .array(downloads)])
        }
        return [
            "sortType": .string(list.sortType.rawValue), "sortOrder": .string(list.sortOrder.rawValue),
            "sections": .array(sections),
        ]
    }

    /// `peregrine.sortList(type[, order])`: `addTime`, `fileName`, `fileSize` or `fileType`;
    /// `ascending` or `descending`.
    func peregrineSortList(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let typeName = try params.string(0)
        guard let type = ListSortType(rawValue: typeName), type != .manual else {
            throw RPCError("Unknown sort type \(typeName).")
        }
        var order = ListSortOrder.ascending
        if params[1] != nil {
            let orderName = try params.string(1)
            guard let parsed = ListSortOrder(rawValue: orderName) else { throw RPCError("Unknown order \(orderName).") }
            order = parsed
        }
        manager.sortListBy(type: type, order: order)
        return "OK"
    }

    /// `peregrine.trash(gid)`: moves a download to the trash (its transfer stops, its files
    /// stay); it reads as `removed` until restored or the trash is emptied.
    func peregrineTrash(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (gid, url) = try task(try params.string(0))
        guard manager.indexPath(ofTask: url) != nil else { throw RPCError("GID#\(gid) is in the trash already.") }
        let wasOpen = manager.isTrashOpened
        if !wasOpen { manager.isTrashOpened = true }
        defer { if !wasOpen { manager.isTrashOpened = false } }
        do throws(DownloadManagerError) {
            try manager.deleteTasks([url])
        } catch {
            throw Self.error(error)
        }
        notify("aria2.onDownloadStop", gid: gid)
        return .string(gid.description)
    }

    /// `peregrine.restore(gid)`: puts a download back from the trash, in its former state.
    func peregrineRestore(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (gid, url) = try task(try params.string(0))
        do throws(DownloadManagerError) {
            try manager.restoreToDeleteTasks([url])
        } catch {
            throw Self.error(error)
        }
        return .string(gid.description)
    }

    /// `peregrine.listTrash()`: the GIDs in the trash, most recently trashed first.
    func peregrineListTrash() -> JSONValue {
        .array(manager.toDeleteList.map { .string(gid(of: $0).description) })
    }

    /// `peregrine.emptyTrash()`: deletes the downloads in the trash for good, with their files.
    func peregrineEmptyTrash() -> JSONValue {
        let urls = manager.toDeleteList
        _ = manager.emptyToDeleteList()
        state.withLock { state in
            for url in urls {
                if let gid = state.table.gidByURL[url] {
                    state.options[gid] = nil
                    state.paused.remove(gid)
                }
                state.table.remove(url: url)
            }
        }
        return "OK"
    }

    /// `peregrine.setDisplayName(gid, name)`.
    func peregrineSetDisplayName(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let (_, url) = try task(try params.string(0))
        let name = try params.string(1)
        do throws(DownloadManagerError) {
            try manager.changeDisplayNameOfTask(url, to: name)
        } catch {
            throw Self.error(error)
        }
        return "OK"
    }
}
