/// What a thumbnail is requested for: a task, identified by its key, and its file.
///
/// The facade fills this from its task record; nothing here depends on the engine's types.
public struct ThumbnailSource: Sendable, Hashable {
    /// The task's key (its URL string): the cache key and the custom thumbnail's owner.
    public var taskKey: String
    /// The file's name, for its kind and type icon.
    public var fileName: String
    /// Where the finished file is; `nil` while there is none (not downloaded yet), which gives the
    /// type icon.
    public var filePath: String?
    /// The MIME type the server sent, if any, which refines the kind.
    public var mimeType: String?
    /// A kind decided elsewhere, used instead of classifying ``fileName`` and ``mimeType``.
    public var kind: FileKind?

    /// A source. `fileName` defaults to the last component of `filePath`, else of `taskKey`'s path
    /// (query and fragment dropped).
    public init(
        taskKey: String, filePath: String?, fileName: String? = nil, mimeType: String? = nil, kind: FileKind? = nil
    ) {
        self.taskKey = taskKey
        self.filePath = filePath
        self.mimeType = mimeType
        self.kind = kind
        if let fileName {
            self.fileName = fileName
        } else if let filePath, let last = filePath.split(separator: "/").last {
            self.fileName = String(last)
        } else {
            let path = taskKey.split(separator: "?", maxSplits: 1).first?.split(separator: "#", maxSplits: 1).first
            self.fileName = path?.split(separator: "/").last.map(String.init) ?? taskKey
        }
    }
}
