import PeregrineCore

/// Why a ``DownloadQueue`` (or `DownloadManager`) call changed nothing, or why a manager could not be made.
///
/// A struct with static codes so that the set can grow. Every throwing operation of the
/// manager checks its input first and throws before it changes anything.
public struct DownloadManagerError: PeregrineError {
    /// A kind of problem.
    public struct Code: PeregrineErrorCode {
        public let name: String
        /// No task (in the list, or in the trash, as the operation needs) has this URL string.
        public static let unknownTask = Code(name: "unknown task")
        /// An index path is outside the download list.
        public static let indexPathOutOfBounds = Code(name: "index path out of bounds")
        /// A section index is outside the download list.
        public static let sectionOutOfBounds = Code(name: "section out of bounds")
        /// A trash index is outside ``DownloadQueueing/toDeleteList``.
        public static let trashIndexOutOfBounds = Code(name: "trash index out of bounds")
        /// The operation needs manual mode (`ListSortType.manual`).
        public static let requiresManualMode = Code(name: "requires manual mode")
        /// The operation needs a predefined sort type (not manual).
        public static let requiresPredefinedMode = Code(name: "requires a predefined sort type")
        /// A title or display name is empty, or titles and groups differ in number.
        public static let invalidArgument = Code(name: "invalid argument")
        /// A meta info value is not a property-list value.
        public static let notPropertyList = Code(name: "not a property-list value")
        /// A sort predicate is not a strict weak ordering.
        public static let inconsistentOrdering = Code(name: "inconsistent ordering")
        /// The task's state does not allow the operation.
        public static let invalidState = Code(name: "operation not allowed in this state")
        /// The list changed while a custom sort ran its predicates; sort again.
        public static let concurrentModification = Code(name: "list changed during the sort")
        /// The store could not be opened, read or written.
        public static let storeFailed = Code(name: "store failed")
        /// The download directory cannot be used.
        public static let directoryUnavailable = Code(name: "download directory unavailable")
        /// A file could not be read or copied.
        public static let fileFailed = Code(name: "file operation failed")
        /// A URL cannot be downloaded (not http or https, no host, white space …).
        public static let invalidURL = Code(name: "invalid URL")
        /// A checksum specification cannot be used (unknown algorithm, wrong length …).
        public static let invalidChecksum = Code(name: "invalid checksum")
        /// The task is in the trash: restore it (or clean it up) first.
        public static let inTrash = Code(name: "in the trash")
    }

    /// What went wrong.
    public var code: Code
    /// The details, and what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package static func unknown(_ urlString: String) -> DownloadManagerError {
        DownloadManagerError(.unknownTask, "no task with the URL \(urlString)")
    }

    /// The manager error for a list model error (same meaning, facade codes).
    init(_ error: DownloadListError) {
        let code: Code =
            switch error.code {
            case .sectionOutOfBounds: .sectionOutOfBounds
            case .indexPathOutOfBounds: .indexPathOutOfBounds
            case .trashIndexOutOfBounds: .trashIndexOutOfBounds
            case .requiresManualMode: .requiresManualMode
            case .requiresPredefinedMode: .requiresPredefinedMode
            case .unknownURL: .unknownTask
            case .inconsistentOrdering: .inconsistentOrdering
            default: .invalidArgument
            }
        self.init(code, error.message)
    }
}
