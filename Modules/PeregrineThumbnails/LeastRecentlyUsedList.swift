/// A map that remembers the order of use: lookups and insertions move an entry to the front, and
/// ``removeLeastRecentlyUsed()`` takes from the back. Every operation is O(1) (amortized). Not
/// thread-safe: its owners keep it behind a lock.
struct LeastRecentlyUsedList<Key: Hashable, Value> {
    private struct Node {
        var key: Key
        var value: Value
        var cost: Int
        var newer: Int?
        var older: Int?
    }

    private var nodes: [Node?] = []
    private var free: [Int] = []
    private var slots: [Key: Int] = [:]
    private var newest: Int?
    private var oldest: Int?
    /// The sum of the costs of all entries.
    private(set) var totalCost = 0

    var count: Int { slots.count }

    /// The value for `key`, marking it most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let slot = slots[key] else { return nil }
        moveToFront(slot)
        return nodes[slot]!.value
    }

    /// The value for `key`, leaving the order alone.
    func peek(_ key: Key) -> Value? {
        slots[key].map { nodes[$0]!.value }
    }

    /// Inserts or replaces the value for `key` as the most recently used.
    mutating func set(_ value: Value, for key: Key, cost: Int) {
        if let slot = slots[key] {
            totalCost += cost - nodes[slot]!.cost
            nodes[slot]!.value = value
            nodes[slot]!.cost = cost
            moveToFront(slot)
            return
        }
        let node = Node(key: key, value: value, cost: cost, newer: nil, older: newest)
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            nodes[slot] = node
        } else {
            slot = nodes.count
            nodes.append(node)
        }
        if let newest { nodes[newest]!.newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
        slots[key] = slot
        totalCost += cost
    }

    /// Removes the entry for `key`, returning its value.
    @discardableResult
    mutating func remove(_ key: Key) -> Value? {
        guard let slot = slots.removeValue(forKey: key) else { return nil }
        let node = nodes[slot]!
        unlink(slot)
        nodes[slot] = nil
        free.append(slot)
        totalCost -= node.cost
        return node.value
    }

    /// Removes and returns the least recently used entry.
    @discardableResult
    mutating func removeLeastRecentlyUsed() -> (key: Key, value: Value)? {
        guard let oldest, let node = nodes[oldest] else { return nil }
        remove(node.key)
        return (node.key, node.value)
    }

    /// Removes every entry whose key matches.
    mutating func removeAll(where shouldRemove: (Key) -> Bool) {
        for key in slots.keys where shouldRemove(key) { remove(key) }
    }

    mutating func removeAll() {
        self = LeastRecentlyUsedList()
    }

    /// The keys from most to least recently used.
    var keysByRecency: [Key] {
        var keys: [Key] = []
        var cursor = newest
        while let slot = cursor, let node = nodes[slot] {
            keys.append(node.key)
            cursor = node.older
        }
        return keys
    }

    private mutating func moveToFront(_ slot: Int) {
        guard newest != slot else { return }
        unlink(slot)
        nodes[slot]!.older = newest
        nodes[slot]!.newer = nil
        if let newest { nodes[newest]!.newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let node = nodes[slot]!
        if let newer = node.newer { nodes[newer]!.older = node.older } else { newest = node.older }
        if let older = node.older { nodes[older]!.newer = node.newer } else { oldest = node.newer }
        nodes[slot]!.newer = nil
        nodes[slot]!.older = nil
    }
}
