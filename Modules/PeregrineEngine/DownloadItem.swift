/// One download to add, with what the caller knows about it beyond the URL.
public struct DownloadItem: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The URL string; it becomes the task's key.
    public var urlString: String
    /// The file name to use instead of the server's (sanitized; conflicts still apply).
    public var preferredFileName: String?
    /// A checksum specification for the verification plug-in (e.g. `sha256=…`).
    public var checksum: String?

    /// Creates an item.
    public init(_ urlString: String, preferredFileName: String? = nil, checksum: String? = nil) {
        self.urlString = urlString
        self.preferredFileName = preferredFileName
        self.checksum = checksum
    }

    public init(stringLiteral value: String) { self.init(value) }
}
