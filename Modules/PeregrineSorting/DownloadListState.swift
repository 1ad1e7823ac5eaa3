#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything the download list must save to come back exactly as it was.
///
/// The task attributes (``ListItem``) are not part of it: they live in the task records, and
/// ``DownloadList/init(restoring:items:clock:calendar:)`` takes them back beside this value.
public struct DownloadListState: Sendable, Hashable, Codable {
    /// The URL strings, section by section, as ``DownloadList/downloadList`` shows them.
    public var sections: [[String]]
    /// One title per section.
    public var sectionTitles: [String]
    /// The trash, most recently deleted first.
    public var toDeleteList: [String]
    /// The sort type.
    public var sortType: ListSortType
    /// The sort order.
    public var sortOrder: ListSortOrder
    /// The sectioning options.
    public var sectioning: ListSectioning
    /// The moment the add-time groups were computed for, when the list is sectioned by add time.
    public var addTimeReference: Date?

    /// Creates a state. Complexity: O(1).
    public init(
        sections: [[String]] = [],
        sectionTitles: [String] = [],
        toDeleteList: [String] = [],
        sortType: ListSortType = .addTime,
        sortOrder: ListSortOrder = .ascending,
        sectioning: ListSectioning = [],
        addTimeReference: Date? = nil
    ) {
        self.sections = sections
        self.sectionTitles = sectionTitles
        self.toDeleteList = toDeleteList
        self.sortType = sortType
        self.sortOrder = sortOrder
        self.sectioning = sectioning
        self.addTimeReference = addTimeReference
    }
}
