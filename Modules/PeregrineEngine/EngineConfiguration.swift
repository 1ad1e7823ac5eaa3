import Logging
import PeregrineChecksums
import PeregrineCore
import PeregrineTransport

extension DownloadEngine {
    /// How an engine works. The options SDEDownloadManager lets an app change at any time
    /// (`maxDownloadCount`, `pauseDownloadBySuspendingSessionTask`, `downloadNewFileImmediately`,
    /// `hiddenFileExtension`) and the conflict policy are initial values here and properties of
    /// the engine afterwards.
    public struct Configuration: Sendable {
        /// The download directory; created when missing.
        public var directory: String
        /// The most tasks of one list downloading (or paused with their connection) at once;
        /// ≤ 0 means no limit, the default (as SDE's `OperationQueue` default).
        public var maxDownloadCount: Int
        /// Whether pausing keeps the connection (`paused`, holding a slot) rather than stopping
        /// with a resume record. True by default, as in SDE.
        public var pauseDownloadBySuspendingSessionTask: Bool
        /// Whether a new task starts (or queues) at once. True by default, as in SDE.
        public var downloadNewFileImmediately: Bool
        /// Whether display names drop the file extension. True by default, as in SDE.
        public var hiddenFileExtension: Bool
        /// What to do when a finished file's name is taken.
        public var conflictPolicy: FileConflictPolicy
        /// When temporary files are synced to move resume records forward.
        public var checkpoint: CheckpointPolicy
        /// The shortest time between two progress events of one task: 250 ms, so at most four
        /// a second.
        public var progressInterval: Duration
        /// How many connections a task may use (1 by default: no splitting).
        public var segmentation: Segmentation
        /// Whether a download's file has its blocks reserved for the whole expected length when
        /// its first bytes arrive (`fallocate`, aria2's `--file-allocation=falloc`): a full disk
        /// then fails the download at its start, and a later write cannot run out of space. The
        /// file's size still grows with what is written. On by default.
        public var preallocatesFiles = true
        /// Whether a finished file takes the time the server's `Last-Modified` names as its
        /// modification (and access) time, as curl's `--remote-time` does; off by default (the
        /// time it was downloaded). A missing or unreadable date leaves the time alone.
        public var usesRemoteTime = false
        /// How often activity tracking samples: once a second.
        public var activityInterval: Duration
        /// The span over which the speed for remaining times is averaged: 10 s.
        public var activityWindow: Duration
        /// The engine's clock.
        public var clock: EngineClock
        /// Adapts each request (credentials, trust, headers); nil for none.
        public var requestAdapter: (any RequestAdapter)?
        /// Decides retries after failures; nil to never retry.
        public var retryPolicy: (any RetryPolicy)?
        /// Verifies finished files before they are renamed into place; nil for the engine's
        /// own checksum verification (see ``verifiesChecksums``).
        public var verifier: (any TaskFileVerifier)?
        /// What computes digests for the engine's own checksum verification and for
        /// ``DownloadEngine/verifyTasks(_:)``: `OpenSSLDigests()` from `PeregrineVerification`,
        /// say. Nil by default, so that the engine alone links no hashing library; an engine
        /// without digests and without a ``verifier`` refuses tasks that carry a checksum
        /// (unless ``verifiesChecksums`` is off) rather than leave them unchecked.
        public var digests: (any DigestProvider)?
        /// Whether tasks that carry a checksum are verified with a ``ChecksumTaskVerifier`` on
        /// ``digests`` (hashed while downloading) when no ``verifier`` is set. True by default;
        /// off, checksums are kept but not checked.
        public var verifiesChecksums: Bool
        /// What a checksum mismatch leads to: Reed's rule by default — up to 3 downloads from
        /// zero, then `failed(.verification)` with the last file kept aside as `NAME.mismatch`.
        /// A task's ``DownloadItem/verificationRetry`` overrides it; a ``retryPolicy`` is asked
        /// once this policy gives up.
        public var verificationRetry: VerificationRetryPolicy
        /// Receives every change of the task records (a store); nil for none.
        public var recordObserver: (any TaskRecordObserver)?
        /// Receives every event synchronously, in order (a facade); nil for none. The
        /// ``DownloadEngine/events()`` sequences get them either way.
        public var eventObserver: (any EngineEventObserver)?
        /// Receives each locked section's events and record changes in one hand-over (the
        /// persistent queue, which orders sections across threads); nil for none. When set, the
        /// engine calls it instead of ``recordObserver`` and ``eventObserver``.
        package var sectionObserver: (any EngineSectionObserver)?
        /// Classifies files; `FileKind.other` for every file by default.
        public var fileKindClassifier: FileKindClassifier
        /// Where the engine logs.
        public var logger: Logger
        /// The speed limit shared by every transfer of the engine; nil (the default) for none.
        /// Changeable later through ``DownloadEngine/overallSpeedLimit``.
        public var overallSpeedLimit: SpeedLimit?

        /// Creates a configuration with SDE's defaults.
        public init(
            directory: String,
            maxDownloadCount: Int = 0,
            pauseDownloadBySuspendingSessionTask: Bool = true,
            downloadNewFileImmediately: Bool = true,
            hiddenFileExtension: Bool = true,
            conflictPolicy: FileConflictPolicy = .rename,
            checkpoint: CheckpointPolicy = CheckpointPolicy(),
            progressInterval: Duration = .milliseconds(250),
            activityInterval: Duration = .seconds(1),
            activityWindow: Duration = .seconds(10),
            clock: EngineClock = .continuous,
            requestAdapter: (any RequestAdapter)? = nil,
            retryPolicy: (any RetryPolicy)? = nil,
            verifier: (any TaskFileVerifier)? = nil,
            digests: (any DigestProvider)? = nil,
            recordObserver: (any TaskRecordObserver)? = nil,
            eventObserver: (any EngineEventObserver)? = nil,
            fileKindClassifier: @escaping FileKindClassifier = { _, _ in .other },
            logger: Logger = Logger(label: "peregrine.engine"),
            verifiesChecksums: Bool = true,
            verificationRetry: VerificationRetryPolicy = .default,
            segmentation: Segmentation = Segmentation(),
            overallSpeedLimit: SpeedLimit? = nil
        ) {
            self.overallSpeedLimit = overallSpeedLimit
            self.segmentation = segmentation
            self.verifiesChecksums = verifiesChecksums
            self.verificationRetry = verificationRetry
            self.directory = directory
            self.maxDownloadCount = maxDownloadCount
            self.pauseDownloadBySuspendingSessionTask = pauseDownloadBySuspendingSessionTask
            self.downloadNewFileImmediately = downloadNewFileImmediately
            self.hiddenFileExtension = hiddenFileExtension
            self.conflictPolicy = conflictPolicy
            self.checkpoint = checkpoint
            self.progressInterval = progressInterval
            self.activityInterval = activityInterval
            self.activityWindow = activityWindow
            self.clock = clock
            self.requestAdapter = requestAdapter
            self.retryPolicy = retryPolicy
            self.verifier = verifier
            self.digests = digests
            self.recordObserver = recordObserver
            self.eventObserver = eventObserver
            self.fileKindClassifier = fileKindClassifier
            self.logger = logger
        }
    }
}
