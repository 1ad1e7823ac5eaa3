/// Names one download list of an engine (Reed's `downloadListKey`): each list has its own
/// `maxDownloadCount` and waiting queue, so a "PDF" list and an "MP3" list run side by side.
public struct DownloadListKey: Sendable, Hashable, Codable, Comparable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The list's name.
    public var rawValue: String

    /// Creates a key.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.init(value) }

    /// The list every task joins unless told otherwise.
    public static let `default` = DownloadListKey("")

    public var description: String { rawValue.isEmpty ? "default list" : "list \"\(rawValue)\"" }

    public static func < (lhs: DownloadListKey, rhs: DownloadListKey) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
