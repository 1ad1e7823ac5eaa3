/// What becomes of a downloaded file whose checksum did not match. It never goes to its destination.
public enum MismatchedFilePolicy: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Keep it beside the destination as `NAME.mismatch` for inspection, replacing an older one.
    case keepAside
    /// Delete it.
    case delete

    /// The suffix of a file kept aside.
    public static let suffix = ".mismatch"

    /// Where a mismatched download for `destination` is kept: `destination + ".mismatch"`, or
    /// nil when the policy deletes it.
    public func asidePath(forDestination destination: String) -> String? {
        switch self {
        case .keepAside: destination + Self.suffix
        case .delete: nil
        }
    }

    public var description: String {
        switch self {
        case .keepAside: "keep the file aside as NAME\(Self.suffix)"
        case .delete: "delete the file"
        }
    }
}
