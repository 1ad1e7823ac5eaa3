/// The size sections of ``ListSortType/fileSize`` when ``ListSectioning/fileSize`` is on.
///
/// Decimal units (1 MB = 1 000 000 bytes) and one rule everywhere, upper bounds inclusive
/// (SDEDownloadManager mixed `<` and `≤`). Cases are declared smallest first.
public enum FileSizeGroup: Int, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// A negative size: not known yet.
    case unknown
    /// 0 … 1 000 000 bytes.
    case upTo1MB
    /// 1 000 001 … 100 000 000 bytes.
    case upTo100MB
    /// 100 000 001 … 1 000 000 000 bytes.
    case upTo1GB
    /// More than 1 000 000 000 bytes.
    case largerThan1GB

    /// The group of a size in bytes. Complexity: O(1).
    public init(size: Int64) {
        switch size {
        case ..<0: self = .unknown
        case ...1_000_000: self = .upTo1MB
        case ...100_000_000: self = .upTo100MB
        case ...1_000_000_000: self = .upTo1GB
        default: self = .largerThan1GB
        }
    }

    /// The section title: "Unknown Size", "0 ~ 1 MB", "1 MB ~ 100 MB", "100 MB ~ 1 GB",
    /// "Larger Than 1 GB".
    public var title: String {
        switch self {
        case .unknown: "Unknown Size"
        case .upTo1MB: "0 ~ 1 MB"
        case .upTo100MB: "1 MB ~ 100 MB"
        case .upTo1GB: "100 MB ~ 1 GB"
        case .largerThan1GB: "Larger Than 1 GB"
        }
    }

    /// Smallest first. Complexity: O(1).
    public static func < (lhs: FileSizeGroup, rhs: FileSizeGroup) -> Bool { lhs.rawValue < rhs.rawValue }
}
