/// Ascending or descending, for the predefined sort types and the custom sort.
///
/// Descending reverses the rows of every section and, except for ``ListSortType/fileType``, the
/// order of the sections too.
public enum ListSortOrder: String, Sendable, Hashable, Codable, CaseIterable {
    /// Smallest first: oldest, A first, smallest.
    case ascending
    /// Largest first: newest, Z first, largest.
    case descending
}
