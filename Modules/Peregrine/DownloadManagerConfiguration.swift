import Logging
import PeregrineCurlTransport
import PeregrineJSONStorage
import PeregrineVerification

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension DownloadManager {
    /// Opens the store of a manager identifier.
    public typealias StoreFactory =
        @Sendable (_ identifier: String, _ configuration: StoreConfiguration) throws(StoreError) -> any TaskStore

    /// How a ``DownloadManager`` is made: where files and state go, which transport and store it
    /// uses, and the initial values of SDEDownloadManager's options.
    ///
    /// Options SDE saved (``maxDownloadCount``, ``isTrashOpened``, sort settings) come from the
    /// store when it has them; these values apply to a manager seen for the first time.
    public struct Configuration: Sendable {
        /// The download directory; nil for `<stateDirectory>/<identifier>/Downloads`.
        public var downloadDirectory: String?
        /// Where the store keeps its files and custom thumbnails live.
        public var stateDirectory: String
        /// The transport; nil for a `CurlTransport` with its defaults. Tests pass a
        /// `MockTransport`.
        public var transport: (any Transport)?
        /// Opens the manager's store; ``defaultStoreFactory`` (the JSON store) by default.
        public var storeFactory: StoreFactory
        /// The store's flush delay and compaction threshold (its root is ``stateDirectory``).
        public var flushDelay: Duration
        /// The initial most tasks downloading at once per list; ≤ 0 is unlimited.
        public var maxDownloadCount: Int
        /// Whether pausing keeps the connection. Not saved, as in SDE.
        public var pauseDownloadBySuspendingSessionTask: Bool
        /// Whether new tasks start at once. Not saved, as in SDE.
        public var downloadNewFileImmediately: Bool
        /// Whether display names drop the file extension.
        public var hiddenFileExtension: Bool
        /// The initial trash switch.
        public var isTrashOpened: Bool
        /// What happens when a finished file's name is taken.
        public var conflictPolicy: FileConflictPolicy
        /// The engine's clock (tests use the mock transport's virtual clock).
        public var clock: EngineClock
        /// The clock the list's add-time sections are computed from.
        public var listClock: @Sendable () -> Date
        /// The calendar the list's add-time sections are computed in.
        public var calendar: Calendar
        /// Adapts each request (credentials, trust, headers): plug `PeregrineAuth` here.
        public var requestAdapter: (any RequestAdapter)?
        /// Decides retries after failures: `BackoffRetryPolicy.standard` by default (a dropped
        /// connection, a timeout, 408, 429 and 5xx are tried again after a growing wait, from the
        /// bytes on disk, honouring `Retry-After`); nil turns retrying off.
        public var retryPolicy: (any RetryPolicy)?
        /// Verifies finished files before they are renamed into place (checksums).
        public var verifier: (any TaskFileVerifier)?
        #if Thumbnails
            /// The thumbnailer's options; its index handler is set by the manager.
            ///
            /// A nil `Thumbnailer.Configuration.customThumbnailDirectory` becomes
            /// `<stateDirectory>/<identifier>/CustomThumbnails`. A nil `Thumbnailer.Configuration.disk`
            /// becomes a disk thumbnail cache in `<stateDirectory>/<identifier>/ThumbnailCache` with
            /// `ThumbnailDiskStorage.Config`'s default size limit, so thumbnails survive restarts;
            /// set `Thumbnailer.Configuration.cachePolicy` to `ThumbnailCachePolicy.memoryOnly`
            /// (or `ThumbnailCachePolicy.none`) for no disk cache.
            public var thumbnails: Thumbnailer.Configuration
        #endif
        /// Where the manager logs (swift-log's `Logger`, re-exported by `Peregrine`). Silence it
        /// with `Logger(label: "peregrine") { _ in SwiftLogNoOpLogHandler() }`, or set its
        /// `logLevel`.
        public var logger: Logger
        /// How often a running download's resume offset is synced and recorded.
        public var checkpoint: CheckpointPolicy
        /// Whether tasks with a checksum are hashed while they download and checked.
        public var verifiesChecksums: Bool
        /// What happens on a checksum mismatch, for tasks without a rule of their own (Reed:
        /// three downloads in all, from zero).
        public var verificationRetry: VerificationRetryPolicy
        /// How many connections one task may use (aria2's `--split`); 1 by default.
        public var segmentation: Segmentation
        /// Whether a download's blocks are reserved for its whole length when it starts
        /// (`fallocate`; see `DownloadEngine.Configuration.preallocatesFiles`). On by default.
        public var preallocatesFiles = true
        /// Whether a finished file takes the server's `Last-Modified` as its time (see
        /// `DownloadEngine.Configuration.usesRemoteTime`). Off by default.
        public var usesRemoteTime = false
        /// The initial speed limit shared by all the manager's transfers (aria2's
        /// `max-overall-download-limit`); nil, the default, for none. Changeable later through
        /// `DownloadQueue.overallSpeedLimit`, whose value, once set, is saved and wins over
        /// this one when the store is loaded again.
        public var overallSpeedLimit: SpeedLimit? = nil

        /// A configuration with SDE's defaults, state under `StoreConfiguration.defaultRootDirectory`.
        public init(
            downloadDirectory: String? = nil,
            stateDirectory: String = StoreConfiguration.defaultRootDirectory,
            transport: (any Transport)? = nil,
            storeFactory: @escaping StoreFactory = DownloadManager.Configuration.defaultStoreFactory,
            flushDelay: Duration = .seconds(1),
            maxDownloadCount: Int = 0,
            pauseDownloadBySuspendingSessionTask: Bool = true,
            downloadNewFileImmediately: Bool = true,
            hiddenFileExtension: Bool = true,
            isTrashOpened: Bool = false,
            conflictPolicy: FileConflictPolicy = .rename,
            clock: EngineClock = .continuous,
            listClock: @escaping @Sendable () -> Date = { Date() },
            calendar: Calendar = Calendar(identifier: .gregorian),
            requestAdapter: (any RequestAdapter)? = nil,
            retryPolicy: (any RetryPolicy)? = BackoffRetryPolicy.standard,
            verifier: (any TaskFileVerifier)? = nil,
            logger: Logger = Logger(label: "peregrine.manager"),
            checkpoint: CheckpointPolicy = CheckpointPolicy(),
            verifiesChecksums: Bool = true,
            verificationRetry: VerificationRetryPolicy = .default,
            segmentation: Segmentation = Segmentation()
        ) {
            self.segmentation = segmentation
            self.checkpoint = checkpoint
            self.verifiesChecksums = verifiesChecksums
            self.verificationRetry = verificationRetry
            self.downloadDirectory = downloadDirectory
            self.stateDirectory = stateDirectory
            self.transport = transport
            self.storeFactory = storeFactory
            self.flushDelay = flushDelay
            self.maxDownloadCount = maxDownloadCount
            self.pauseDownloadBySuspendingSessionTask = pauseDownloadBySuspendingSessionTask
            self.downloadNewFileImmediately = downloadNewFileImmediately
            self.hiddenFileExtension = hiddenFileExtension
            self.isTrashOpened = isTrashOpened
            self.conflictPolicy = conflictPolicy
            self.clock = clock
            self.listClock = listClock
            self.calendar = calendar
            self.requestAdapter = requestAdapter
            self.retryPolicy = retryPolicy
            self.verifier = verifier
            #if Thumbnails
                self.thumbnails = Thumbnailer.Configuration()
            #endif
            self.logger = logger
        }

        #if Thumbnails
            /// A configuration with SDE's defaults and these thumbnail options (the Thumbnails
            /// trait).
            public init(
                downloadDirectory: String? = nil,
                stateDirectory: String = StoreConfiguration.defaultRootDirectory,
                transport: (any Transport)? = nil,
                storeFactory: @escaping StoreFactory = DownloadManager.Configuration.defaultStoreFactory,
                flushDelay: Duration = .seconds(1),
                maxDownloadCount: Int = 0,
                pauseDownloadBySuspendingSessionTask: Bool = true,
                downloadNewFileImmediately: Bool = true,
                hiddenFileExtension: Bool = true,
                isTrashOpened: Bool = false,
                conflictPolicy: FileConflictPolicy = .rename,
                clock: EngineClock = .continuous,
                listClock: @escaping @Sendable () -> Date = { Date() },
                calendar: Calendar = Calendar(identifier: .gregorian),
                requestAdapter: (any RequestAdapter)? = nil,
                retryPolicy: (any RetryPolicy)? = BackoffRetryPolicy.standard,
                verifier: (any TaskFileVerifier)? = nil,
                thumbnails: Thumbnailer.Configuration,
                logger: Logger = Logger(label: "peregrine.manager"),
                checkpoint: CheckpointPolicy = CheckpointPolicy(),
                verifiesChecksums: Bool = true,
                verificationRetry: VerificationRetryPolicy = .default,
                segmentation: Segmentation = Segmentation()
            ) {
                self.init(
                    downloadDirectory: downloadDirectory, stateDirectory: stateDirectory, transport: transport,
                    storeFactory: storeFactory, flushDelay: flushDelay, maxDownloadCount: maxDownloadCount,
                    pauseDownloadBySuspendingSessionTask: pauseDownloadBySuspendingSessionTask,
                    downloadNewFileImmediately: downloadNewFileImmediately, hiddenFileExtension: hiddenFileExtension,
                    isTrashOpened: isTrashOpened, conflictPolicy: conflictPolicy, clock: clock, listClock: listClock,
                    calendar: calendar, requestAdapter: requestAdapter, retryPolicy: retryPolicy, verifier: verifier,
                    logger: logger, checkpoint: checkpoint, verifiesChecksums: verifiesChecksums,
                    verificationRetry: verificationRetry, segmentation: segmentation)
                self.thumbnails = thumbnails
            }
        #endif

        /// The store a manager uses unless told otherwise: a `JSONTaskStore` (journal plus
        /// snapshot under ``stateDirectory``). The one place to switch the default backend.
        public static let defaultStoreFactory: StoreFactory = { identifier, configuration throws(StoreError) in
            try JSONTaskStore(identifier: identifier, configuration: configuration)
        }

        /// The download directory for `identifier`.
        func resolvedDownloadDirectory(for identifier: String) -> String {
            downloadDirectory ?? "\(stateDirectory)/\(identifier)/Downloads"
        }

        /// The custom thumbnail directory for `identifier`.
        func customThumbnailDirectory(for identifier: String) -> String {
            "\(stateDirectory)/\(identifier)/CustomThumbnails"
        }

        /// The default thumbnail cache directory for `identifier`.
        func thumbnailCacheDirectory(for identifier: String) -> String {
            "\(stateDirectory)/\(identifier)/ThumbnailCache"
        }

        /// How a file's kind is told: the thumbnails' classifier, else the standard one.
        var classifier: FileTypeClassifier {
            #if Thumbnails
                thumbnails.classifier
            #else
                .standard
            #endif
        }

        #if Thumbnails
            /// The disk thumbnail cache of `identifier`: ``thumbnails``' own, else the default one
            /// unless the cache policy keeps thumbnails off the disk.
            func resolvedThumbnailDisk(for identifier: String) -> ThumbnailDiskStorage.Config? {
                if let disk = thumbnails.disk { return disk }
                guard thumbnails.cachePolicy == .memoryAndDisk else { return nil }
                return ThumbnailDiskStorage.Config(directory: thumbnailCacheDirectory(for: identifier))
            }
        #endif
    }
}
