import Synchronization

/// A counter of the changes of the download lists' shape (rows added, moved, trashed, deleted,
/// renamed), which the dashboard reads to know when to ask for a list again.
final class ListRevision: Sendable {
    private let value = Atomic<Int64>(0)

    /// The number of changes so far.
    var current: Int64 { value.load(ordering: .relaxed) }

    /// Counts one change.
    func bump() { value.add(1, ordering: .relaxed) }
}
