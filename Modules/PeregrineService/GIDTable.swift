/// The two-way map between aria2 GIDs and Peregrine's task keys (URL strings).
///
/// A pure value: the service holds it behind a lock. GIDs are random, never reused within
/// the table, and stored with each task (meta info `aria2.gid`) so that they survive restarts.
struct GIDTable: Sendable {
    private(set) var urlByGID: [GID: String] = [:]
    private(set) var gidByURL: [String: GID] = [:]

    /// The GID of a task, made (and reported as new) when it has none: `preferred` when no
    /// other task has it, else a random one.
    mutating func gid<G: RandomNumberGenerator>(
        for url: String, preferring preferred: GID? = nil, using generator: inout G
    ) -> (GID, isNew: Bool) {
        if let gid = gidByURL[url] { return (gid, false) }
        if let preferred, urlByGID[preferred] == nil {
            insert(preferred, url: url)
            return (preferred, true)
        }
        var gid = GID.random(using: &generator)
        while urlByGID[gid] != nil { gid = GID.random(using: &generator) }
        insert(gid, url: url)
        return (gid, true)
    }

    /// Records a known pair (a GID read back from the store); false when the GID is taken.
    @discardableResult
    mutating func insert(_ gid: GID, url: String) -> Bool {
        guard urlByGID[gid] == nil else { return false }
        if let old = gidByURL[url] { urlByGID[old] = nil }
        urlByGID[gid] = url
        gidByURL[url] = gid
        return true
    }

    /// Forgets a task's GID.
    mutating func remove(url: String) {
        if let gid = gidByURL.removeValue(forKey: url) { urlByGID[gid] = nil }
    }

    /// The GIDs that start with `prefix` (lowercase hex), among these and `others`.
    func matching(prefix: String, others: some Sequence<GID>) -> [GID] {
        let all = Set(urlByGID.keys).union(others)
        return all.filter { $0.description.hasPrefix(prefix) }
    }
}
