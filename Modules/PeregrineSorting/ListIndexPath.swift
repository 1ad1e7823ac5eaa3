/// The location of a task in the download list: a section and an item (row) inside it.
///
/// Peregrine's own small counterpart of UIKit's `IndexPath`, with no Foundation dependency.
/// Ordered by section, then item, as a table view shows them.
public struct ListIndexPath: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The section index, from 0.
    public var section: Int
    /// The item (row) index inside the section, from 0.
    public var item: Int

    /// Creates an index path. Complexity: O(1).
    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    /// Creates an index path with UIKit's argument order. Complexity: O(1).
    public init(item: Int, section: Int) {
        self.init(section: section, item: item)
    }

    /// Creates an index path with UIKit's table-view names (`IndexPath(row:section:)`), as SDE
    /// code writes it. Complexity: O(1).
    public init(row: Int, section: Int) {
        self.init(section: section, item: row)
    }

    /// The item index, under UIKit's name for table views.
    public var row: Int { item }

    /// Section first, then item. Complexity: O(1).
    public static func < (lhs: ListIndexPath, rhs: ListIndexPath) -> Bool {
        (lhs.section, lhs.item) < (rhs.section, rhs.item)
    }

    /// `[section, item]`, as Foundation prints an `IndexPath`.
    public var description: String { "[\(section), \(item)]" }
}
