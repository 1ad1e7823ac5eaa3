/// What one mutation did to the list, in the terms of a table view's batch update.
///
/// Follows `UITableView.performBatchUpdates` rules, so a UI can animate it as given:
/// - deleted items and sections are in the coordinates *before* the change; inserted ones,
///   retitled sections and move destinations in the coordinates *after* it; move sources before;
/// - the items of a deleted or inserted section are not listed again as items;
/// - an item is never moved out of a deleted section or into an inserted one (that is a deletion
///   plus an insertion);
/// - items that are listed nowhere keep their relative order.
///
/// When ``isReload`` is true (a sort, a mode switch) the whole list was rebuilt: reload the view
/// and ignore the other list fields. The trash fields describe ``DownloadList/toDeleteList``,
/// a single-section list, in the same way.
public struct ListChange: Sendable, Hashable {
    /// A task that moved.
    public struct Move: Sendable, Hashable {
        /// Where it was, before the change.
        public var from: ListIndexPath
        /// Where it is, after the change.
        public var to: ListIndexPath

        /// Creates a move. Complexity: O(1).
        public init(from: ListIndexPath, to: ListIndexPath) {
            self.from = from
            self.to = to
        }
    }

    /// A section that moved with its tasks and title.
    public struct SectionMove: Sendable, Hashable {
        /// Its index before the change.
        public var from: Int
        /// Its index after the change.
        public var to: Int

        /// Creates a section move. Complexity: O(1).
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// The whole list was rebuilt: reload everything.
    public var isReload = false
    /// Sections that disappeared, in old coordinates, ascending.
    public var deletedSections: [Int] = []
    /// Sections that appeared, in new coordinates, ascending.
    public var insertedSections: [Int] = []
    /// Sections that moved.
    public var movedSections: [SectionMove] = []
    /// Sections whose title changed, in new coordinates, ascending.
    public var retitledSections: [Int] = []
    /// Tasks that disappeared, in old coordinates, ascending.
    public var deletedItems: [ListIndexPath] = []
    /// Tasks that appeared, in new coordinates, ascending.
    public var insertedItems: [ListIndexPath] = []
    /// Tasks that moved.
    public var movedItems: [Move] = []
    /// Trash rows that disappeared, in old coordinates, ascending.
    public var deletedTrashIndexes: [Int] = []
    /// Trash rows that appeared, in new coordinates, ascending.
    public var insertedTrashIndexes: [Int] = []

    /// An empty change. Complexity: O(1).
    public init() {}

    /// A change that rebuilt the whole list. Complexity: O(1).
    public static var reload: ListChange {
        var change = ListChange()
        change.isReload = true
        return change
    }

    /// Whether nothing changed. Complexity: O(1).
    public var isEmpty: Bool {
        !isReload && deletedSections.isEmpty && insertedSections.isEmpty && movedSections.isEmpty
            && retitledSections.isEmpty && deletedItems.isEmpty && insertedItems.isEmpty
            && movedItems.isEmpty && deletedTrashIndexes.isEmpty && insertedTrashIndexes.isEmpty
    }
}
