import PeregrineCore
import PeregrineStorage

/// Where each task of a ``SnapshotBuilder`` is, by URL: an open-addressing table of positions
/// in the builder's task array, compared against the URLs there.
///
/// A `[String: Int]` keeps a second reference to every URL and, at a million tasks, about
/// 48 MB of buckets; this keeps 8 bytes a slot (part of the URL's hash and the position), at
/// most half the slots used, so 16 MB at a million.
struct TaskIndex: Sendable {
    /// `position + 1` in the low 32 bits (0: empty, `UInt32.max`: removed), the hash's high
    /// bits in the high 32.
    private var slots: [UInt64] = []
    /// Tasks indexed.
    private(set) var count = 0
    /// Slots not empty (tasks and removal marks).
    private var occupied = 0

    private static let removedMark: UInt64 = 0xFFFF_FFFF

    /// Makes room for `capacity` tasks without growing.
    mutating func reserveCapacity(_ capacity: Int, tasks: [StoredTask]) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        if size > slots.count { rebuild(size: size, tasks: tasks) }
    }

    /// The position of the task for `urlString`.
    func position(of urlString: String, in tasks: [StoredTask]) -> Int? {
        slot(of: urlString, in: tasks).map { Int(slots[$0] & 0xFFFF_FFFF) - 1 }
    }

    /// The slot that holds the task for `urlString`.
    private func slot(of urlString: String, in tasks: [StoredTask]) -> Int? {
        guard !slots.isEmpty else { return nil }
        let hash = UInt64(truncatingIfNeeded: urlString.hashValue)
        let tag = hash >> 32
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = slots[slot]
            if entry == 0 { return nil }
            let low = entry & 0xFFFF_FFFF
            if low != Self.removedMark, entry >> 32 == tag, tasks[Int(low) - 1].urlString == urlString { return slot }
            slot = (slot + 1) & mask
        }
    }

    /// Records that the task for `urlString`, not indexed yet, is at `position`.
    mutating func insert(_ urlString: String, at position: Int, tasks: [StoredTask]) {
        if (occupied + 1) * 2 > slots.count {
            // Mostly removal marks: the same size, without them; else twice the size.
            rebuild(size: (count + 1) * 4 > slots.count ? max(16, slots.count * 2) : slots.count, tasks: tasks)
        }
        let hash = UInt64(truncatingIfNeeded: urlString.hashValue)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 && slots[slot] & 0xFFFF_FFFF != Self.removedMark { slot = (slot + 1) & mask }
        if slots[slot] == 0 { occupied += 1 }
        slots[slot] = (hash >> 32) << 32 | UInt64(position + 1)
        count += 1
    }

    /// Forgets the task for `urlString`; returns where it was.
    mutating func remove(_ urlString: String, in tasks: [StoredTask]) -> Int? {
        guard let slot = slot(of: urlString, in: tasks) else { return nil }
        let position = Int(slots[slot] & 0xFFFF_FFFF) - 1
        slots[slot] = Self.removedMark
        count -= 1
        return position
    }

    /// Rehashes every indexed task into `size` slots, dropping removal marks.
    private mutating func rebuild(size: Int, tasks: [StoredTask]) {
        let old = slots
        slots = [UInt64](repeating: 0, count: size)
        occupied = 0
        let mask = size - 1
        for entry in old where entry != 0 && entry & 0xFFFF_FFFF != Self.removedMark {
            let position = Int(entry & 0xFFFF_FFFF) - 1
            let hash = UInt64(truncatingIfNeeded: tasks[position].urlString.hashValue)
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = (hash >> 32) << 32 | UInt64(position + 1)
            occupied += 1
        }
    }
}
