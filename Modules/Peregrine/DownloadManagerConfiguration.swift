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
    /// uses, and the configurations of the parts it composes — the engine's
    /// (`DownloadEngine.Configuration`: SDEDownloadManager's options, retries, verification,
    /// connections, limits) and the list's (`DownloadQueue.Options`).
    ///
    /// The parts' members read and write as the configuration's own
    /// (`configuration.maxDownloadCount = 3`, `configuration.isTrashOpened = true`).
    /// Options SDE saved (`maxDownloadCount`, `isTrashOpened`, sort settings) come from the
    /// store when it has them; these values apply to a manager seen for the first time.
    ///
    /// Where the parts would each keep a copy of one thing, the manager gives them its own: the
    /// engine's `directory` is the resolved ``downloadDirectory``; its `fileKindClassifier` (and,
    /// with thumbnails, the thumbnailer's `classifier`) is the list's `classifier`, so that the
    /// list, the engine and the type icons agree; its observers are the queue's.
    @dynamicMemberLookup
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
        /// The engine's configuration; ``defaultEngine`` unless given.
        public var engine: DownloadEngine.Configuration
        /// The list's options. The `manualMode:` of ``DownloadManager/manager(identifier:manualMode:configuration:)``,
        /// when true, wins over its `manualMode`.
        public var list: DownloadQueue.Options
        #if Thumbnails
            /// The thumbnailer's options; its index handler is set by the manager, and its
            /// classifier is the list's.
            ///
            /// A nil `Thumbnailer.Configuration.customThumbnailDirectory` becomes
            /// `<stateDirectory>/<identifier>/CustomThumbnails`. A nil `Thumbnailer.Configuration.disk`
            /// becomes a disk thumbnail cache in `<stateDirectory>/<identifier>/ThumbnailCache` with
            /// `ThumbnailDiskStorage.Config`'s default size limit, so thumbnails survive restarts;
            /// set `Thumbnailer.Configuration.cachePolicy` to `ThumbnailCachePolicy.memoryOnly`
            /// (or `ThumbnailCachePolicy.none`) for no disk cache.
            public var thumbnails = Thumbnailer.Configuration()
        #endif

        /// A configuration with SDE's defaults, state under `StoreConfiguration.defaultRootDirectory`.
        public init(
            downloadDirectory: String? = nil,
            stateDirectory: String = StoreConfiguration.defaultRootDirectory,
            transport: (any Transport)? = nil,
            storeFactory: @escaping StoreFactory = DownloadManager.Configuration.defaultStoreFactory,
            flushDelay: Duration = .seconds(1),
            engine: DownloadEngine.Configuration = DownloadManager.Configuration.defaultEngine,
            list: DownloadQueue.Options = DownloadQueue.Options()
        ) {
            self.downloadDirectory = downloadDirectory
            self.stateDirectory = stateDirectory
            self.transport = transport
            self.storeFactory = storeFactory
            self.flushDelay = flushDelay
            self.engine = engine
            self.list = list
        }

        /// The engine's configuration a manager starts from: SDE's defaults plus what an app
        /// wants of a manager — retries (`BackoffRetryPolicy.standard`: a dropped connection, a
        /// timeout, 408, 429 and 5xx are tried again after a growing wait, from the bytes on
        /// disk, honouring `Retry-After`), OpenSSL's digests for checksums, and the log label
        /// `peregrine.manager`. Its `directory` is replaced (see ``Configuration``).
        public static var defaultEngine: DownloadEngine.Configuration {
            DownloadEngine.Configuration(
                directory: "", retryPolicy: BackoffRetryPolicy.standard, digests: OpenSSLDigests(),
                logger: Logger(label: "peregrine.manager"))
        }

        /// A member of the engine's configuration, as the manager's own.
        public subscript<Value>(dynamicMember member: WritableKeyPath<DownloadEngine.Configuration, Value>) -> Value {
            get { engine[keyPath: member] }
            set { engine[keyPath: member] = newValue }
        }

        /// A member of the list's options, as the manager's own.
        public subscript<Value>(dynamicMember member: WritableKeyPath<DownloadQueue.Options, Value>) -> Value {
            get { list[keyPath: member] }
            set { list[keyPath: member] = newValue }
        }

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
