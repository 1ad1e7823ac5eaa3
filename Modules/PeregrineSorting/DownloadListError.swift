import PeregrineCore

/// Why the download list refused an operation. The list is unchanged when one is thrown.
///
/// A struct with static codes (as in swift-nio's `FileSystemError`) so that the set can grow.
public struct DownloadListError: PeregrineError {
    /// A kind of refusal.
    public struct Code: PeregrineErrorCode {
        public let name: String

        /// A section index outside `0 ..< sectionCount` (or `0 ... sectionCount` where a new
        /// section is inserted).
        public static let sectionOutOfBounds = Code(name: "section out of bounds")
        /// An index path whose section or item does not exist.
        public static let indexPathOutOfBounds = Code(name: "index path out of bounds")
        /// An index into the trash (``DownloadList/toDeleteList``) that does not exist.
        public static let trashIndexOutOfBounds = Code(name: "trash index out of bounds")
        /// The operation needs manual mode (moves, placeholder sections, titles, insertion at a
        /// location).
        public static let requiresManualMode = Code(name: "requires manual mode")
        /// The operation needs a predefined sort type (adding without a location).
        public static let requiresPredefinedMode = Code(name: "requires a predefined sort type")
        /// A URL that is not in the list (or, for trash operations, not in the trash).
        public static let unknownURL = Code(name: "unknown URL")
        /// A section title that is empty where manual mode needs one.
        public static let emptyTitle = Code(name: "empty section title")
        /// Sections and titles whose counts differ.
        public static let titleCountMismatch = Code(name: "title count mismatch")
        /// A sort predicate that is not a strict weak ordering: its own result was out of order.
        public static let inconsistentOrdering = Code(name: "inconsistent ordering")
        /// A section that still holds tasks, where an empty one is needed.
        public static let sectionNotEmpty = Code(name: "section not empty")
        /// A saved state that cannot be restored: a URL twice, a URL without its item or an item
        /// without its URL, an empty section in a predefined mode.
        public static let invalidState = Code(name: "invalid saved state")
    }

    /// What kind of refusal.
    public var code: Code
    /// What was wrong, with the offending value; at most 300 characters.
    public var message: String

    /// Creates an error; a message longer than 300 characters is cut short.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message.count > 300 ? String(message.prefix(300)) + "…" : message
    }
}
