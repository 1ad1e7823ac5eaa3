/// One row per method the service answers: its name, where `system.listMethods` lists it, and
/// what the service does with it beside calling it. The lists and sets the service consults
/// are derived from the table, so a method's traits are written once.
struct RPCMethod: Sendable {
    /// Where a method comes from.
    enum Family: Sendable { case aria2, peregrine, dashboard }

    /// What the service does with a method beside calling it.
    struct Traits: OptionSet, Sendable {
        let rawValue: UInt8
        /// Changes nothing: a call of any other method invalidates the status index when it
        /// returns (also when it fails: it may have changed something first).
        static let readOnly = Traits(rawValue: 1 << 0)
        /// A read of memory only that a request's own thread may answer (the fast paths), on a
        /// service without a fleet's database.
        static let immediate = Traits(rawValue: 1 << 1)
        /// In `system.multicall`, shares one sync with the other calls: its only effects are
        /// store changes, and nothing reports them done before the multicall answers.
        static let groupCommit = Traits(rawValue: 1 << 2)
        /// On a fleet service, answered from what the service has in memory, without the
        /// database.
        static let fleetLocal = Traits(rawValue: 1 << 3)
        /// Refused by a fleet service: the shared queue has one order (the order of addition),
        /// no sections and no trash, and a task's file is on whichever service downloaded it.
        static let fleetRefused = Traits(rawValue: 1 << 4)
    }

    let name: String
    let family: Family
    let traits: Traits

    init(_ name: String, _ family: Family, _ traits: Traits = []) {
        self.name = name
        self.family = family
        self.traits = traits
    }
}

extension RPCDispatcher {
    /// Every method, in the order `system.listMethods` lists them.
    static let methodTable: [RPCMethod] = [
        RPCMethod("aria2.addUri", .aria2, [.groupCommit]),
        RPCMethod("aria2.remove", .aria2),
        RPCMethod("aria2.forceRemove", .aria2),
        RPCMethod("aria2.pause", .aria2),
        RPCMethod("aria2.pauseAll", .aria2),
        RPCMethod("aria2.forcePause", .aria2),
        RPCMethod("aria2.forcePauseAll", .aria2),
        RPCMethod("aria2.unpause", .aria2),
        RPCMethod("aria2.unpauseAll", .aria2),
        RPCMethod("aria2.tellStatus", .aria2, [.readOnly, .immediate]),
        RPCMethod("aria2.getUris", .aria2, [.readOnly, .immediate]),
        RPCMethod("aria2.getFiles", .aria2, [.readOnly, .immediate]),
        RPCMethod("aria2.tellActive", .aria2, [.readOnly, .immediate]),
        RPCMethod("aria2.tellWaiting", .aria2, [.readOnly, .immediate]),
        RPCMethod("aria2.tellStopped", .aria2, [.readOnly, .immediate]),
        RPCMethod("aria2.changePosition", .aria2, [.groupCommit]),
        RPCMethod("aria2.getOption", .aria2, [.readOnly, .immediate]),
        RPCMethod("aria2.changeOption", .aria2),
        RPCMethod("aria2.getGlobalOption", .aria2, [.readOnly, .immediate, .fleetLocal]),
        RPCMethod("aria2.changeGlobalOption", .aria2, [.fleetLocal]),
        RPCMethod("aria2.getGlobalStat", .aria2, [.readOnly, .immediate]),
        RPCMethod("aria2.purgeDownloadResult", .aria2),
        RPCMethod("aria2.removeDownloadResult", .aria2),
        RPCMethod("aria2.getVersion", .aria2, [.readOnly, .immediate, .fleetLocal]),
        RPCMethod("aria2.getSessionInfo", .aria2, [.readOnly, .immediate, .fleetLocal]),
        RPCMethod("aria2.shutdown", .aria2, [.fleetLocal]),
        RPCMethod("aria2.forceShutdown", .aria2, [.fleetLocal]),
        RPCMethod("aria2.saveSession", .aria2, [.fleetLocal]),
        RPCMethod("aria2.getServers", .aria2, [.readOnly]),
        RPCMethod("aria2.changeUri", .aria2),
        RPCMethod("system.multicall", .aria2),
        RPCMethod("system.listMethods", .aria2),
        RPCMethod("system.listNotifications", .aria2),
        RPCMethod("peregrine.list", .peregrine, [.readOnly]),
        RPCMethod("peregrine.sortList", .peregrine, [.fleetRefused]),
        RPCMethod("peregrine.trash", .peregrine, [.fleetRefused]),
        RPCMethod("peregrine.restore", .peregrine, [.fleetRefused]),
        RPCMethod("peregrine.listTrash", .peregrine, [.readOnly]),
        RPCMethod("peregrine.emptyTrash", .peregrine, [.fleetRefused]),
        RPCMethod("peregrine.setDisplayName", .peregrine),
        RPCMethod("peregrine.lists", .dashboard, [.readOnly]),
        RPCMethod("peregrine.listView", .dashboard, [.readOnly]),
        RPCMethod("peregrine.listRevision", .dashboard, [.readOnly]),
        RPCMethod("peregrine.setSort", .dashboard, [.fleetRefused]),
        RPCMethod("peregrine.setSectioning", .dashboard, [.fleetRefused]),
        RPCMethod("peregrine.moveTask", .dashboard, [.fleetRefused]),
        RPCMethod("peregrine.renameSection", .dashboard, [.fleetRefused]),
        RPCMethod("peregrine.insertSection", .dashboard, [.fleetRefused]),
        RPCMethod("peregrine.stop", .dashboard, [.fleetRefused]),
        RPCMethod("peregrine.restart", .dashboard),
        RPCMethod("peregrine.delete", .dashboard, [.fleetRefused]),
        RPCMethod("peregrine.trashView", .dashboard, [.readOnly, .fleetRefused]),
        RPCMethod("peregrine.untrash", .dashboard, [.fleetRefused]),
        RPCMethod("peregrine.cleanUp", .dashboard, [.fleetRefused]),
        RPCMethod("peregrine.addUris", .dashboard),
    ]

    /// The names of a family's methods, in the table's order.
    static func methodNames(in family: RPCMethod.Family) -> [String] {
        methodTable.filter { $0.family == family }.map(\.name)
    }

    /// The names of the methods with `trait`.
    static func methodNames(with trait: RPCMethod.Traits) -> Set<String> {
        Set(methodTable.filter { $0.traits.contains(trait) }.map(\.name))
    }
}
