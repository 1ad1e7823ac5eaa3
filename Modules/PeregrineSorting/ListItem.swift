import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the download list knows about one task: its key and the attributes it sorts by.
///
/// The facade builds one from the task record and gives it to ``DownloadList`` when the task is
/// added, and again through ``DownloadList/update(_:)-(ListItem)`` when the size or the name
/// becomes known. The list keeps a copy; it never reads the task record itself.
public struct ListItem: Sendable, Hashable, Codable {
    /// The task's key: its download URL string exactly as the task was created with it.
    public var url: String
    /// The file name shown and sorted by (the name the file has or will have on disk).
    public var fileName: String
    /// The file size in bytes; negative when unknown (the "Unknown Size" section).
    public var fileSize: Int64
    /// When the task was created: the addTime sort and its sections use it.
    public var addTime: Date
    /// The kind of file: the fileType sort's sections.
    public var kind: FileKind
    /// Whether the file is completely downloaded: finished tasks are left out of
    /// ``DownloadList/unfinishedList``.
    public var isFinished: Bool

    /// Creates an item. Complexity: O(1).
    public init(
        url: String,
        fileName: String,
        fileSize: Int64 = -1,
        addTime: Date,
        kind: FileKind = .other,
        isFinished: Bool = false
    ) {
        self.url = url
        self.fileName = fileName
        self.fileSize = fileSize
        self.addTime = addTime
        self.kind = kind
        self.isFinished = isFinished
    }
}
