import PeregrineCore

/// Why a client's `dir` or `out` was refused: it would make the service write outside the
/// download root it was started with, or under a name the engine cannot use.
public struct PathConfinementError: PeregrineError {
    /// A kind of refusal.
    public struct Code: PeregrineErrorCode {
        /// A stable short name.
        public let name: String
        /// The path names a parent directory (`..`).
        public static let parentReference = Code(name: "parent reference")
        /// The path (after resolving symbolic links) is outside the download root.
        public static let outsideRoot = Code(name: "outside the download root")
        /// The file name is empty, `.`, or holds a `/` or a NUL (or a folder's name is too long).
        public static let invalidFileName = Code(name: "invalid file name")
    }

    /// The kind of refusal.
    public var code: Code
    /// The path given, bounded in length.
    public var path: String

    /// Creates an error.
    public init(_ code: Code, path: String) {
        self.code = code
        self.path = String(path.prefix(300))
    }

    /// What happened, with the refused path.
    public var message: String { description }

    public var description: String { "'\(path)' is refused: \(code)" }
}
