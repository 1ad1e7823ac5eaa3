import Logging
import PeregrineCore
import PeregrineCurlTransport
import PeregrineVerification
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A download manager: SDEDownloadManager's API for Linux — persistent, resumable downloads kept
/// as a sectioned, sortable list with a trash, thumbnails and meta info.
///
/// It holds a `DownloadQueue` (the engine on a store, and the lists) with the parts an app wants
/// by default — libcurl's transport, the JSON store, OpenSSL's checksums — and a `Thumbnailer`,
/// made from one ``Configuration`` and named by an identifier. Everything the queue does, the
/// manager does, through `DownloadQueueing`: the list, the operations, the trash, the queries,
/// meta info, limits, events (see `DownloadQueue` for threads and errors).
///
/// ## Identity
/// ``manager(identifier:manualMode:configuration:)`` returns the same instance for the same
/// identifier in a process; ``init(identifier:manualMode:configuration:)`` makes an unregistered
/// one (tests, or a manager whose lifetime the app controls).
public final class DownloadManager: DownloadQueueing {
    /// The queue the manager holds; its members are the manager's.
    public let downloadQueue: DownloadQueue

    #if Thumbnails
        /// The thumbnailer (with the Thumbnails trait, on by default).
        public let thumbnailer: Thumbnailer
    #endif

    private static let registry = Locked<[String: DownloadManager]>([:])

    // MARK: Creating

    /// The manager for `identifier`: the one already in memory, else a new one loaded from its
    /// store (SDE's `manager(identifier:manualMode:)`).
    ///
    /// - Parameters:
    ///   - identifier: names the manager and its store.
    ///   - manualMode: whether a manager seen for the first time starts in manual sort mode
    ///     (as the configuration's `list.manualMode`); ignored when the store has a list.
    ///   - configuration: used only when the manager is created.
    /// - Throws: `DownloadManagerError` when the store cannot be read or the download
    ///   directory cannot be made.
    public static func manager(
        identifier: String, manualMode: Bool = false, configuration: Configuration = Configuration()
    ) throws(DownloadManagerError) -> DownloadManager {
        try registry.withLock { (managers) throws(DownloadManagerError) -> DownloadManager in
            if let existing = managers[identifier] { return existing }
            let manager = try DownloadManager(
                identifier: identifier, manualMode: manualMode, configuration: configuration)
            managers[identifier] = manager
            return manager
        }
    }

    /// Whether the manager's stored data may be destroyed: the store holds data and no manager
    /// with the identifier is in memory (SDE's `isDestoryableForManager`).
    public static func isDestroyableForManager(
        _ identifier: String, configuration: Configuration = Configuration()
    ) -> Bool {
        guard registry.withLock({ $0[identifier] == nil }) else { return false }
        guard let store = try? configuration.storeFactory(identifier, storeConfiguration(configuration)) else {
            return false
        }
        defer { try? store.close() }
        guard let snapshot = try? store.load() else { return false }
        return !snapshot.tasks.isEmpty || !snapshot.lists.isEmpty || !snapshot.configuration.isEmpty
    }

    /// Destroys the manager's stored data — tasks, lists, configuration, custom thumbnails, the
    /// thumbnail cache — when ``isDestroyableForManager(_:configuration:)``. Downloaded files are
    /// never deleted.
    ///
    /// - Returns: whether data was destroyed.
    @discardableResult
    public static func destroyManager(_ identifier: String, configuration: Configuration = Configuration()) -> Bool {
        guard isDestroyableForManager(identifier, configuration: configuration) else { return false }
        guard let store = try? configuration.storeFactory(identifier, storeConfiguration(configuration)),
            let snapshot = try? store.load()
        else { return false }
        defer { try? store.close() }
        var changes: [StoreChange] = snapshot.tasks.map { .removeTask(urlString: $0.urlString) }
        changes += snapshot.lists.keys.sorted().map { .removeList(identifier: $0) }
        changes += snapshot.customThumbnails.keys.sorted().map { .setCustomThumbnail(urlString: $0, nil) }
        changes.append(.setConfiguration([:]))
        do {
            try store.record(changes)
            try store.compact()
        } catch {
            return false
        }
        try? FileManager.default.removeItem(atPath: configuration.customThumbnailDirectory(for: identifier))
        #if Thumbnails
            if let disk = configuration.resolvedThumbnailDisk(for: identifier) {
                // Only the cache's own files: a configured directory may hold other things.
                ThumbnailDiskStorage(config: disk).removeAll()
            }
        #endif
        try? FileManager.default.removeItem(atPath: configuration.thumbnailCacheDirectory(for: identifier))
        return true
    }

    static func storeConfiguration(_ configuration: Configuration) -> StoreConfiguration {
        StoreConfiguration(rootDirectory: configuration.stateDirectory, flushDelay: configuration.flushDelay)
    }

    /// Makes a manager that is not registered under its identifier; see
    /// ``manager(identifier:manualMode:configuration:)``. Loads the store synchronously: the
    /// tasks come back into the engine (interrupted ones repaired) and the lists are rebuilt.
    ///
    /// - Throws: `DownloadManagerError` when the store cannot be opened or read, or the
    ///   download directory cannot be made.
    public init(
        identifier: String, manualMode: Bool = false, configuration: Configuration = Configuration()
    ) throws(DownloadManagerError) {
        let store: any TaskStore
        do {
            store = try configuration.storeFactory(identifier, Self.storeConfiguration(configuration))
        } catch {
            throw DownloadManagerError(.storeFailed, "cannot load the store of \(identifier): \(error)")
        }
        let snapshot = try DownloadQueue.load(store, identifier)

        #if Thumbnails
            var thumbnailConfiguration = configuration.thumbnails
            thumbnailConfiguration.classifier = configuration.list.classifier
            thumbnailConfiguration.customThumbnailDirectory =
                thumbnailConfiguration.customThumbnailDirectory
                ?? configuration.customThumbnailDirectory(for: identifier)
            thumbnailConfiguration.disk = configuration.resolvedThumbnailDisk(for: identifier)
            let relay = CustomThumbnailRelay(initial: snapshot.customThumbnails)
            thumbnailConfiguration.customThumbnailIndexDidChange = { relay.indexDidChange($0) }
            let thumbnailer = Thumbnailer(configuration: thumbnailConfiguration)
            self.thumbnailer = thumbnailer
            // Drops the cached thumbnails of tasks whose files went (and their custom ones when
            // the tasks went too).
            let filesDidGo: @Sendable ([String], Bool) -> Void = { urlStrings, tasksRemoved in
                for url in urlStrings {
                    thumbnailer.removeThumbnails(forTask: url)
                    if tasksRemoved { thumbnailer.removeCustomThumbnailForTask(url) }
                }
            }
        #else
            let filesDidGo: (@Sendable ([String], Bool) -> Void)? = nil
        #endif

        var engineConfiguration = configuration.engine
        engineConfiguration.directory = configuration.resolvedDownloadDirectory(for: identifier)
        // Checksums need digests: a configuration made from the engine's defaults has none.
        if engineConfiguration.digests == nil { engineConfiguration.digests = OpenSSLDigests() }
        var options = configuration.list
        if manualMode { options.manualMode = true }
        downloadQueue = try DownloadQueue(
            identifier: identifier, transport: configuration.transport ?? CurlTransport(), store: store,
            snapshot: snapshot, configuration: engineConfiguration, options: options,
            filesDidGo: filesDidGo)

        #if Thumbnails
            relay.attach(core)
            var index = CustomThumbnailIndex()
            for (url, stored) in snapshot.customThumbnails {
                guard let pixelFormat = ThumbnailPixelFormat(rawValue: stored.pixelFormat),
                    let format = ImageFormat(rawValue: stored.format)
                else { continue }
                index.entries[url] = CustomThumbnailIndex.Entry(
                    fileName: stored.fileName, width: stored.width, height: stored.height, pixelFormat: pixelFormat,
                    format: format, contentIdentifier: stored.contentIdentifier)
            }
            thumbnailer.restoreCustomThumbnails(index)
        #endif
    }

}

#if Thumbnails
    /// Saves the thumbnailer's custom-thumbnail index through the store, as changes per task.
    final class CustomThumbnailRelay: Sendable {
        /// The manager's core once it is made; changes before are kept until then.
        private let target = Locked<(core: ManagerCore?, pending: [StoreChange])>((nil, []))
        private let previous: Locked<[String: StoredCustomThumbnail]>

        init(initial: [String: StoredCustomThumbnail]) {
            previous = Locked(initial)
        }

        /// Records through `core` from now on, and what changed before.
        func attach(_ core: ManagerCore) {
            let pending = target.withLock { target in
                target.core = core
                defer { target.pending = [] }
                return target.pending
            }
            if !pending.isEmpty { core.record { pending } }
        }

        func indexDidChange(_ index: CustomThumbnailIndex) {
            var current: [String: StoredCustomThumbnail] = [:]
            for (url, entry) in index.entries {
                current[url] = StoredCustomThumbnail(
                    fileName: entry.fileName, width: entry.width, height: entry.height,
                    pixelFormat: entry.pixelFormat.rawValue, format: entry.format.rawValue,
                    contentIdentifier: entry.contentIdentifier)
            }
            let changes = previous.withLock { previous -> [StoreChange] in
                var changes: [StoreChange] = []
                for (url, stored) in current.sorted(by: { $0.key < $1.key }) where previous[url] != stored {
                    changes.append(.setCustomThumbnail(urlString: url, stored))
                }
                for url in previous.keys.sorted() where current[url] == nil {
                    changes.append(.setCustomThumbnail(urlString: url, nil))
                }
                previous = current
                return changes
            }
            guard !changes.isEmpty else { return }
            let core = target.withLock { target -> ManagerCore? in
                if target.core == nil { target.pending += changes }
                return target.core
            }
            core?.record { changes }
        }
    }
#endif
