/// How the download list is ordered: by hand, or by one of four predefined task attributes.
///
/// `manual` is the *manual mode*: the caller decides every location and sections carry titles.
/// The other four are the *predefined mode*: locations follow from the type, the
/// ``ListSortOrder`` and the ``ListSectioning`` options.
public enum ListSortType: String, Sendable, Hashable, Codable, CaseIterable {
    /// The caller places tasks and sections; sections have caller-given titles.
    case manual
    /// By creation date (tasks added at the same time in the order they were added); sectioned
    /// into add-time groups when ``ListSectioning/addTime`` is on.
    case addTime
    /// By file name, numerically and case-insensitively (ties by size, then name, then URL);
    /// sectioned into an A–Z + "#" index when ``ListSectioning/fileNameIndex`` is on.
    case fileName
    /// By file size (ties by name, then URL); sectioned into size groups when
    /// ``ListSectioning/fileSize`` is on.
    case fileSize
    /// Always sectioned Image, Audio, Video, Document, Other (empty ones dropped); by name inside.
    case fileType

    /// Whether this is one of the four predefined types (everything but `manual`).
    public var isPredefined: Bool { self != .manual }
}
