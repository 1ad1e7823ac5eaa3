/// The scheduling state of one download list: its limit, the tasks holding its slots, and its
/// waiting queue in list order.
///
/// The queue is a sorted array read from a moving head, so the usual operations — append a
/// task added last, take the first — cost O(1) amortized; inserting elsewhere or removing a
/// task from the middle costs O(log n) to find and O(n) to move.
struct SchedulingList: Sendable {
    /// The list's own limit, or nil to follow the engine's ``DownloadEngine/maxDownloadCount``.
    var ownLimit: Int?
    /// The tasks downloading or paused with their connection: each holds a slot.
    var holders: Set<String> = []
    /// The waiting tasks from `head` on, by list position (smallest first).
    private var waiting: [(rank: Int64, key: String)] = []
    private var head = 0

    /// The limit in force; ≤ 0 means none.
    func limit(engineDefault: Int) -> Int { ownLimit ?? engineDefault }

    /// Whether another task may take a slot.
    func hasFreeSlot(engineDefault: Int) -> Bool {
        let limit = limit(engineDefault: engineDefault)
        return limit <= 0 || holders.count < limit
    }

    /// How many holders exceed the limit.
    func surplus(engineDefault: Int) -> Int {
        let limit = limit(engineDefault: engineDefault)
        return limit <= 0 ? 0 : max(0, holders.count - limit)
    }

    /// The first waiting task, if any.
    var firstWaiting: String? { head < waiting.count ? waiting[head].key : nil }

    /// The number of waiting tasks.
    var waitingCount: Int { waiting.count - head }

    /// Inserts a waiting task at its place in list order.
    mutating func enqueue(_ key: String, rank: Int64) {
        if head == waiting.count || rank >= waiting[waiting.count - 1].rank {
            waiting.append((rank, key))
        } else {
            waiting.insert((rank, key), at: insertionIndex(for: rank))
        }
    }

    /// Removes a waiting task.
    mutating func dequeue(_ key: String, rank: Int64) {
        if head < waiting.count, waiting[head].key == key {
            head += 1
            compactIfWorthIt()
            return
        }
        var index = insertionIndex(for: rank)
        // Ranks are unique per list; scan back over equal ranks in case a reordering left some.
        while index > head, waiting[index - 1].rank >= rank { index -= 1 }
        while index < waiting.count, waiting[index].rank <= rank {
            if waiting[index].key == key {
                waiting.remove(at: index)
                return
            }
            index += 1
        }
        if let found = waiting[head...].firstIndex(where: { $0.key == key }) { waiting.remove(at: found) }
    }

    /// Rebuilds the queue after the list order changed.
    mutating func reorderWaiting(rank: (String) -> Int64) {
        waiting = waiting[head...].map { (rank($0.key), $0.key) }.sorted { $0.rank < $1.rank }
        head = 0
    }

    private mutating func compactIfWorthIt() {
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
    }

    /// The first index from `head` whose rank is greater than `rank`.
    private func insertionIndex(for rank: Int64) -> Int {
        var low = head
        var high = waiting.count
        while low < high {
            let middle = (low + high) / 2
            if waiting[middle].rank <= rank { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
