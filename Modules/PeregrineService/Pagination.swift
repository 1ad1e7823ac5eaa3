/// aria2's `offset`/`num` paging of `tellWaiting` and `tellStopped`.
///
/// A non-negative offset counts from the front and returns up to `num` items in list order.
/// A negative offset counts from the end (`-1` is the last item) and returns up to `num` items
/// going backwards, so `(-1, 2)` is the last item, then the one before it.
public enum Pagination {
    /// The page of `items`; `num` must be non-negative.
    public static func page<T>(_ items: [T], offset: Int, num: Int) -> [T] {
        guard num > 0 else { return [] }
        if offset >= 0 {
            guard offset < items.count else { return [] }
            return Array(items[offset..<min(items.count, offset + min(num, items.count))])
        }
        let last = items.count + offset
        guard last >= 0 else { return [] }
        let first = max(0, last - (num - 1))
        return Array(items[first...last].reversed())
    }
}
