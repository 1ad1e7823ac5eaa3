/// Which predefined sort types split the list into sections (SDEDownloadManager's
/// `sectioningAddTimeList`, `sectioningFileSizeList` and `indexingFileNameList`).
///
/// Each option only matters while its sort type is the current one. ``ListSortType/fileType``
/// is always sectioned; ``ListSortType/manual`` has the caller's sections.
public struct ListSectioning: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int

    /// Creates a set of options from its raw bits. Complexity: O(1).
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Add-time groups: Future, Today, Yesterday, Last 7 Days, Last 30 Days, Older.
    public static let addTime = ListSectioning(rawValue: 1 << 0)
    /// Size groups: Unknown Size, 0 ~ 1 MB, 1 MB ~ 100 MB, 100 MB ~ 1 GB, Larger Than 1 GB.
    public static let fileSize = ListSectioning(rawValue: 1 << 1)
    /// A name index: A–Z and "#".
    public static let fileNameIndex = ListSectioning(rawValue: 1 << 2)
}
