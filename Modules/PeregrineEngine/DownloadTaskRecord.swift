import PeregrineChecksums
import PeregrineCore
import PeregrineTransport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything about a task that outlives the process: what a store saves and hands back to
/// ``DownloadEngine/restore(_:)``.
///
/// File names are relative to the engine's download directory (SDE stored paths relative to
/// a root), so a moved directory keeps working.
public struct DownloadTaskRecord: Sendable, Hashable, Codable {
    /// The URL exactly as the user gave it: the task's key.
    public var urlString: String
    /// The list the task belongs to.
    public var list: DownloadListKey
    /// The state when the record was taken.
    public var state: DownloadState
    /// Where the transfer can continue. Its offset never exceeds the bytes synced to disk.
    public var resumeRecord: ResumeRecord?
    /// The file's name in the download directory: suggested by the first response, final
    /// once the task is finished (a conflict may have numbered it). With a ``subdirectory``, the
    /// path relative to the download directory (`music/2026/song.flac`).
    public var fileName: String?
    /// The hidden temporary file beside it, e.g. `.peregrine-0123456789abcdef.part`.
    public var temporaryFileName: String
    /// The file's size, when a response told it.
    public var expectedLength: Int64?
    /// The response's MIME type, without parameters.
    public var mimeType: String?
    /// The name the caller asked for, if any (sanitized before use).
    public var preferredFileName: String?
    /// An opaque checksum specification (`sha256=…`) for the verification plug-in.
    public var checksum: String?
    /// When the task was added.
    public var addedAt: Date
    /// When the task finished.
    public var finishedAt: Date?
    /// What is known about the file's checksum: verified while downloading, a mismatch (the
    /// task failed, or ``DownloadEngine/verifyTasks(_:)`` found the file changed), or unverified.
    public var verification: VerificationResult
    /// The URL of the checksum file the checksum comes from, if any; ``checksum`` holds what
    /// was read from it once it was fetched.
    public var checksumURL: String?
    /// The task's own retry policy on a checksum mismatch; nil for the engine's.
    public var verificationRetry: VerificationRetryPolicy?
    /// How many connections the task's download may use (``Segmentation/connectionRange``);
    /// nil for the engine's ``Segmentation/maxConnectionsPerTask``.
    public var maxConnections: Int?
    /// The task's own speed limit, shared by all its connections; nil for none (the list's and
    /// the engine's limits still apply).
    public var speedLimit: SpeedLimit?
    /// Other URLs of the same file, in the order given (see ``DownloadItem/mirrors``).
    public var mirrors: [String]
    /// The folder inside the download directory the file is placed in (see
    /// ``DownloadItem/subdirectory``); nil for the download directory.
    public var subdirectory: String?

    /// Creates a record.
    public init(
        urlString: String, list: DownloadListKey = .default, state: DownloadState, resumeRecord: ResumeRecord? = nil,
        fileName: String? = nil, temporaryFileName: String, expectedLength: Int64? = nil, mimeType: String? = nil,
        preferredFileName: String? = nil, checksum: String? = nil, addedAt: Date, finishedAt: Date? = nil,
        verification: VerificationResult = .unverified, checksumURL: String? = nil,
        verificationRetry: VerificationRetryPolicy? = nil, maxConnections: Int? = nil, speedLimit: SpeedLimit? = nil,
        mirrors: [String] = [], subdirectory: String? = nil
    ) {
        self.subdirectory = subdirectory
        self.mirrors = mirrors
        self.maxConnections = maxConnections
        self.speedLimit = speedLimit
        self.verification = verification
        self.checksumURL = checksumURL
        self.verificationRetry = verificationRetry
        self.urlString = urlString
        self.list = list
        self.state = state
        self.resumeRecord = resumeRecord
        self.fileName = fileName
        self.temporaryFileName = temporaryFileName
        self.expectedLength = expectedLength
        self.mimeType = mimeType
        self.preferredFileName = preferredFileName
        self.checksum = checksum
        self.addedAt = addedAt
        self.finishedAt = finishedAt
    }
}

extension DownloadTaskRecord {
    /// Reads a record; the verification fields may be missing (records stored before they
    /// existed): they then read as unverified, with no checksum URL and the engine's policy.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            urlString: try container.decode(String.self, forKey: .urlString),
            list: try container.decode(DownloadListKey.self, forKey: .list),
            state: try container.decode(DownloadState.self, forKey: .state),
            resumeRecord: try container.decodeIfPresent(ResumeRecord.self, forKey: .resumeRecord),
            fileName: try container.decodeIfPresent(String.self, forKey: .fileName),
            temporaryFileName: try container.decode(String.self, forKey: .temporaryFileName),
            expectedLength: try container.decodeIfPresent(Int64.self, forKey: .expectedLength),
            mimeType: try container.decodeIfPresent(String.self, forKey: .mimeType),
            preferredFileName: try container.decodeIfPresent(String.self, forKey: .preferredFileName),
            checksum: try container.decodeIfPresent(String.self, forKey: .checksum),
            addedAt: try container.decode(Date.self, forKey: .addedAt),
            finishedAt: try container.decodeIfPresent(Date.self, forKey: .finishedAt),
            verification: try container.decodeIfPresent(VerificationResult.self, forKey: .verification) ?? .unverified,
            checksumURL: try container.decodeIfPresent(String.self, forKey: .checksumURL),
            verificationRetry: try container.decodeIfPresent(VerificationRetryPolicy.self, forKey: .verificationRetry),
            maxConnections: try container.decodeIfPresent(Int.self, forKey: .maxConnections),
            speedLimit: try container.decodeIfPresent(SpeedLimit.self, forKey: .speedLimit),
            mirrors: try container.decodeIfPresent([String].self, forKey: .mirrors) ?? [],
            subdirectory: try container.decodeIfPresent(String.self, forKey: .subdirectory))
    }
}

extension DownloadTaskRecord {
    /// `name` in the task's ``subdirectory``: a path relative to the download directory.
    public func inSubdirectory(_ name: String) -> String {
        guard let subdirectory, !subdirectory.isEmpty else { return name }
        return subdirectory + "/" + name
    }

    /// The file's own name: ``fileName`` without its folder.
    public var baseFileName: String? {
        fileName.map { name in
            DownloadDirectory.folder(of: name).map { String(name[name.index(after: $0.endIndex)...]) } ?? name
        }
    }
}

/// A task as the engine sees it now: its record plus what changes too often to store.
public struct DownloadTaskSnapshot: Sendable, Hashable {
    /// The stored part.
    public var record: DownloadTaskRecord
    /// Bytes of the file received so far (live while downloading).
    public var receivedBytes: Int64
    /// Whether the task waits in its list's queue.
    public var isQueued: Bool
    /// Its position in its list's order (smaller first).
    public var listPosition: Int64
    /// How many times its transfer was retried (after a failure or a checksum mismatch) since
    /// the user last started it; back to 0 once it finished or failed.
    public var retryCount: Int = 0
    /// How many downloads of it ended with a checksum mismatch since the user last started it
    /// (kept after it failed, so a `failed(.verification)` task tells how often it tried).
    public var mismatchCount: Int = 0
    /// When a waiting retry starts the next transfer, on the engine's clock (``EngineClock/now``);
    /// nil when no retry waits.
    public var retryAt: Duration?
    /// The task's URLs (its own or its mirrors) no longer used since the user last started it,
    /// with why: they failed, announced another size, or served bytes that did not match the
    /// checksum. Kept in memory only: a new process tries every URL again.
    public var droppedURLs: [String: FailureReason] = [:]

    /// The file's checksum verification.
    public var verification: VerificationResult { record.verification }

    /// The task's URL string.
    public var urlString: String { record.urlString }
    /// The task's state.
    public var state: DownloadState { record.state }
}

/// One change to the stored tasks, for a ``TaskRecordObserver``.
public struct TaskRecordChange: Sendable, Hashable {
    /// What changed.
    public enum Kind: Sendable, Hashable {
        /// The task was added or changed: store this record.
        case upsert(DownloadTaskRecord)
        /// The task left the engine.
        case remove(urlString: String)
    }

    /// The number of the engine's locked section that made the change (the changes of one
    /// section share it; a task changes once per section): apply changes in this order; a change
    /// with a sequence no higher than one already applied for the same task is stale.
    public var sequence: UInt64
    /// The change.
    public var kind: Kind

    /// The URL string of the task concerned.
    public var urlString: String {
        switch kind {
        case .upsert(let record): record.urlString
        case .remove(let urlString): urlString
        }
    }
}
