import PeregrineChecksums
import PeregrineTransport

/// One download to add, with what the caller knows about it beyond the URL.
public struct DownloadItem: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The URL string; it becomes the task's key.
    public var urlString: String
    /// The file name to use instead of the server's (sanitized; conflicts still apply).
    public var preferredFileName: String?
    /// A checksum specification for the verification plug-in (e.g. `sha256=…`); checked when
    /// the task is added (see ``DownloadAddition/invalidChecksums``).
    public var checksum: String?
    /// The URL of a checksum file (`app.iso.sha256`, `SHA256SUMS`) to take the checksum from,
    /// fetched through the engine's transport before the download starts; its entry is picked
    /// by the file's name. Ignored when ``checksum`` is given.
    public var checksumURL: String?
    /// What a checksum mismatch of this task leads to; nil for the engine's
    /// ``DownloadEngine/Configuration/verificationRetry``.
    public var verificationRetry: VerificationRetryPolicy?
    /// How many connections this download may use, 1…64 (aria2's `split`); nil for the engine's
    /// ``Segmentation/maxConnectionsPerTask``. Values outside the range are clamped into it.
    public var maxConnections: Int?
    /// Whether the task starts (or queues) as soon as it is added; nil for the engine's
    /// ``DownloadEngine/downloadNewFileImmediately``. False adds it `pending`, never started
    /// until resumed — not started and stopped at once, which could open a connection first.
    public var startsImmediately: Bool?
    /// This download's own speed limit, shared by all its connections; nil for none. The list's
    /// and the engine's limits apply as well (see ``DownloadEngine/setSpeedLimit(_:forTask:)``).
    public var speedLimit: SpeedLimit?
    /// Other URLs of the same file (aria2 takes several URIs per download): further connections
    /// are spread over them, a mirror that fails or does not fit (another size, no validator)
    /// is dropped for the task, and when the task's own URL fails the next transfer starts on
    /// a mirror. Each must be a valid URL (the item is refused otherwise); duplicates of the
    /// task's URL or of each other are ignored.
    public var mirrors: [String] = []
    /// A folder inside the download directory to place the file in, as a relative path
    /// (`music/2026`), made when the file is placed; nil for the download directory itself.
    /// Each component must be a plain name (no `.`, `..` or empty one): the item is refused
    /// otherwise (``DownloadAddition/invalid``), and a component that is a symbolic link when
    /// the file is placed fails the task, so that no file lands outside the directory.
    public var subdirectory: String?

    /// Creates an item.
    public init(
        _ urlString: String, preferredFileName: String? = nil, checksum: String? = nil, checksumURL: String? = nil,
        verificationRetry: VerificationRetryPolicy? = nil, maxConnections: Int? = nil, startsImmediately: Bool? = nil,
        speedLimit: SpeedLimit? = nil, mirrors: [String] = [], subdirectory: String? = nil
    ) {
        self.subdirectory = subdirectory
        self.mirrors = mirrors
        self.speedLimit = speedLimit
        self.maxConnections = maxConnections
        self.startsImmediately = startsImmediately
        self.urlString = urlString
        self.preferredFileName = preferredFileName
        self.checksum = checksum
        self.checksumURL = checksumURL
        self.verificationRetry = verificationRetry
    }

    public init(stringLiteral value: String) { self.init(value) }
}
