import PeregrineChecksums
import PeregrineCore

/// What ``DownloadEngine/download(_:in:completion:)-([DownloadItem],_,_)`` did with each URL:
/// added, a duplicate of a task already there (or earlier in the same call), or invalid.
/// Rejected URLs changed nothing.
public struct DownloadAddition: Sendable, Hashable {
    /// A URL that names the same download as an existing task.
    public struct Duplicate: Sendable, Hashable {
        /// The URL string given.
        public var urlString: String
        /// The key of the task it duplicates (equal after normalisation).
        public var existingURLString: String
    }

    /// A URL that was refused before any I/O.
    public struct Invalid: Sendable, Hashable {
        /// The URL string given.
        public var urlString: String
        /// Why it was refused.
        public var error: URLValidationError
    }

    /// A download whose checksum (or checksum URL) cannot be used: refused when it is added,
    /// not at the end of its download.
    public struct InvalidChecksum: Sendable, Hashable {
        /// The URL string given.
        public var urlString: String
        /// The checksum specification (or checksum URL) given.
        public var checksum: String
        /// Why it was refused: `VerificationError.Code.unsupportedAlgorithm`,
        /// `VerificationError.Code.invalidHex`, `VerificationError.Code.wrongDigestLength`,
        /// `VerificationError.Code.emptyChecksum`, `VerificationError.Code.malformedChecksum`,
        /// or `VerificationError.Code.checksumFileUnavailable` for a checksum URL that is no
        /// http(s) URL.
        public var error: VerificationError
    }

    /// The URL strings of the new tasks, in the order given.
    public var added: [String] = []
    /// The duplicates, in the order given.
    public var duplicates: [Duplicate] = []
    /// The invalid URLs, in the order given.
    public var invalid: [Invalid] = []
    /// Items refused for their ``DownloadItem/subdirectory``: not a relative path of plain
    /// names inside the download directory.
    public var invalidSubdirectories: [InvalidSubdirectory] = []

    /// An item whose subdirectory cannot be used.
    public struct InvalidSubdirectory: Sendable, Hashable {
        /// The item's URL string.
        public var urlString: String
        /// The subdirectory it asked for.
        public var subdirectory: String
    }
    /// The downloads refused for their checksum, in the order given.
    public var invalidChecksums: [InvalidChecksum] = []

    /// Creates an empty result.
    public init() {}
}
