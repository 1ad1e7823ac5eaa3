import PeregrineCore
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A download list's pictures: file kinds, type icons, image and video thumbnails, custom
/// thumbnails, and their memory and disk caches — SDEDownloadManager's thumbnail features for
/// Linux, with no UI toolkit.
///
/// ## Requesting
/// ``requestThumbnail(for:targetHeight:orLaterProvidedInHandler:)`` never blocks on decoding or
/// disk: it returns a cached thumbnail, or the type icon at once and calls the handler later
/// when the real thumbnail is made (only then, and only once it succeeded). The async
/// ``thumbnail(for:targetHeight:)`` waits for it instead.
///
/// ## Threads
/// Every member is safe to call from any thread. Thumbnails are made on Dispatch threads, at most
/// ``Configuration/maximumConcurrentJobs`` at a time; concurrent requests for the same thumbnail
/// share one job. Handlers run on those threads: hop to your UI's thread yourself.
///
/// ## Failures
/// A file that cannot be thumbnailed (truncated, hostile, lying about its extension, unreadable)
/// keeps its type icon; the failure is remembered until the file changes (its size or
/// modification time), so it is not decoded again on every request.
public final class Thumbnailer: Sendable {
    private typealias Completion = @Sendable (Result<Thumbnail, ThumbnailError>) -> Void

    private struct CustomThumbnail {
        /// The image, for memory-only custom thumbnails; persisted ones are read when needed.
        var original: Thumbnail?
        var entry: CustomThumbnailIndex.Entry?
        var contentIdentifier: String
    }

    private struct Failure {
        var signature: SourceSignature
        var error: ThumbnailError
    }

    private struct State {
        var custom: [String: CustomThumbnail] = [:]
        var inFlight: [ThumbnailCacheKey: [Completion]] = [:]
        var failures: [ThumbnailCacheKey: Failure] = [:]
    }

    /// A thumbnail job: how to make it and how to keep it.
    private struct Work: Sendable {
        var sourcePath: String?
        var policy: ThumbnailCachePolicy
        var make: @Sendable () throws -> Thumbnail
    }

    private enum Plan {
        case ready(Thumbnail)
        case iconOnly(FileKind, ThumbnailError)
        case make(ThumbnailCacheKey, Work, FileKind)
    }

    /// The configuration it was made with.
    public let configuration: Configuration
    /// The hybrid cache of made thumbnails.
    public let cache: ThumbnailCache
    /// The type icons.
    public let icons: TypeIconLibrary
    /// Where persisted custom thumbnails live, when configured.
    public let customThumbnailDirectory: CustomThumbnailDirectory?
    private let jobs: ThumbnailJobQueue
    private let state = Locked(State())

    /// A thumbnailer; nothing is read from disk until used.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        cache = ThumbnailCache(memory: configuration.memory, disk: configuration.disk)
        icons = TypeIconLibrary(
            customIconDirectory: configuration.customIconDirectory, maximumHeight: configuration.maximumTargetHeight)
        customThumbnailDirectory = configuration.customThumbnailDirectory.map(CustomThumbnailDirectory.init(path:))
        jobs = ThumbnailJobQueue(limit: configuration.maximumConcurrentJobs)
    }

    // MARK: File kinds

    /// The kind of a file named `fileName` served as `mimeType` (see `FileTypeClassifier`).
    public func fileType(ofFileNamed fileName: String, mimeType: String? = nil) -> FileKind {
        configuration.classifier.fileType(ofFileNamed: fileName, mimeType: mimeType)
    }

    /// The kind of `source`'s file: its ``ThumbnailSource/kind`` when set, else classified.
    public func fileType(of source: ThumbnailSource) -> FileKind {
        source.kind ?? fileType(ofFileNamed: source.fileName, mimeType: source.mimeType)
    }

    // MARK: Thumbnails

    /// The type icon for `source`, `height` pixels high.
    public func typeIcon(for source: ThumbnailSource, height: Int) -> Thumbnail {
        icons.icon(forFileNamed: source.fileName, kind: fileType(of: source), height: clamped(height))
    }

    /// A thumbnail for `source` at once: the cached one (or the custom one), else the type icon.
    ///
    /// When the returned picture is not the final one and a real thumbnail can be made (an image
    /// or video file exists, or a custom thumbnail must be scaled), it is made in the background
    /// and `handler` is called with it — only then, and only on success. Never blocks on decoding
    /// or file I/O (the first request for an icon height scales the icon, a few milliseconds).
    @discardableResult
    public func requestThumbnail(
        for source: ThumbnailSource, targetHeight: Int,
        orLaterProvidedInHandler handler: @escaping @Sendable (Thumbnail) -> Void
    ) -> Thumbnail {
        requestThumbnailTellingWhetherLater(for: source, targetHeight: targetHeight, orLaterProvidedInHandler: handler)
            .thumbnail
    }

    /// ``requestThumbnail(for:targetHeight:orLaterProvidedInHandler:)``, saying whether a
    /// better picture is being made for `handler` (`isFinal` false) or the one returned is the
    /// best there is (a cached or custom thumbnail, or the icon of a file that has none): a
    /// caller that waits for the handler then knows not to.
    public func requestThumbnailTellingWhetherLater(
        for source: ThumbnailSource, targetHeight: Int,
        orLaterProvidedInHandler handler: @escaping @Sendable (Thumbnail) -> Void
    ) -> (thumbnail: Thumbnail, isFinal: Bool) {
        let height = clamped(targetHeight)
        switch plan(for: source, height: height) {
        case .ready(let thumbnail):
            return (thumbnail, true)
        case .iconOnly(let kind, _):
            return (icons.icon(forFileNamed: source.fileName, kind: kind, height: height), true)
        case .make(let key, let work, let kind):
            schedule(key, work) { result in
                if case .success(let thumbnail) = result { handler(thumbnail) }
            }
            return (icons.icon(forFileNamed: source.fileName, kind: kind, height: height), false)
        }
    }

    /// The thumbnail for `source`, from the caches or made now (waiting for it).
    ///
    /// - Throws: ``ThumbnailError`` — ``ThumbnailError/Code/noThumbnail`` when the file is not an
    ///   image or a video or does not exist yet, ``ThumbnailError/Code/videoToolUnavailable``
    ///   for videos without `ffmpeg`, or why making it failed.
    public func thumbnail(for source: ThumbnailSource, targetHeight: Int) async throws -> Thumbnail {
        let height = clamped(targetHeight)
        switch plan(for: source, height: height) {
        case .ready(let thumbnail):
            return thumbnail
        case .iconOnly(_, let reason):
            throw reason
        case .make(let key, let work, _):
            return try await withCheckedThrowingContinuation { continuation in
                schedule(key, work) { continuation.resume(with: $0) }
            }
        }
    }

    /// The thumbnail for `source` if it is in the memory cache (or is a memory-only custom
    /// thumbnail of a close enough height); never makes one.
    public func cachedThumbnail(for source: ThumbnailSource, targetHeight: Int) -> Thumbnail? {
        if case .ready(let thumbnail) = plan(for: source, height: clamped(targetHeight)) { return thumbnail }
        return nil
    }

    /// Forgets the cached thumbnails of `taskKey` (when its file was deleted or downloaded again).
    /// Its custom thumbnail stays.
    public func removeThumbnails(forTask taskKey: String) {
        cache.removeAll(forTask: taskKey)
        state.withLock { state in
            for key in state.failures.keys where key.taskKey == taskKey { state.failures[key] = nil }
        }
    }

    /// Empties both caches (SDEDownloadManager's `emptyThumbnailCache()`). Custom thumbnails and
    /// icons stay.
    public func emptyThumbnailCache() {
        cache.removeAll()
        state.withLock { $0.failures.removeAll() }
    }

    // MARK: Custom thumbnails

    /// Makes `thumbnail` the picture of `taskKey` (an album cover for a song, a poster for a
    /// film), scaled to each requested height.
    ///
    /// With `cacheInMemoryOnly`, it is kept in memory only and lost at exit (cheaper when many
    /// tasks share one picture). Otherwise it is written to the custom thumbnail directory and
    /// listed in ``customThumbnailIndex`` (the change handler is called), to survive restarts.
    ///
    /// - Throws: ``ThumbnailError/Code/storageFailed`` when it cannot be written or no directory
    ///   is configured.
    public func setCustomThumbnail(_ thumbnail: Thumbnail, forTask taskKey: String, cacheInMemoryOnly: Bool) throws {
        var entry: CustomThumbnailIndex.Entry?
        if !cacheInMemoryOnly {
            guard let directory = customThumbnailDirectory else {
                throw ThumbnailError(
                    .storageFailed, "no custom thumbnail directory is configured; use cacheInMemoryOnly")
            }
            entry = try directory.write(thumbnail, forTask: taskKey)
        }
        let record = CustomThumbnail(
            original: cacheInMemoryOnly ? thumbnail : nil, entry: entry,
            contentIdentifier: entry?.contentIdentifier ?? CustomThumbnailDirectory.contentIdentifier(thumbnail.data))
        let previous = state.withLock { state in
            let previous = state.custom[taskKey]
            state.custom[taskKey] = record
            return previous
        }
        if let old = previous?.entry, old.fileName != entry?.fileName { customThumbnailDirectory?.remove(old) }
        dropScaledCustomThumbnails(of: taskKey)
        if previous?.entry != nil || entry != nil { customThumbnailIndexChanged() }
    }

    /// Removes the custom thumbnail of `taskKey` and returns it, or `nil` when it had none.
    @discardableResult
    public func removeCustomThumbnailForTask(_ taskKey: String) -> Thumbnail? {
        guard let removed = state.withLock({ $0.custom.removeValue(forKey: taskKey) }) else { return nil }
        var thumbnail = removed.original
        if let entry = removed.entry {
            if thumbnail == nil { thumbnail = try? customThumbnailDirectory?.read(entry) }
            customThumbnailDirectory?.remove(entry)
            customThumbnailIndexChanged()
        }
        dropScaledCustomThumbnails(of: taskKey)
        return thumbnail
    }

    /// The custom thumbnail of `taskKey` at its own size, or `nil`. Reads the file of a persisted one.
    public func customThumbnail(forTask taskKey: String) -> Thumbnail? {
        guard let record = state.withLock({ $0.custom[taskKey] }) else { return nil }
        if let original = record.original { return original }
        return record.entry.flatMap { try? customThumbnailDirectory?.read($0) }
    }

    /// The persisted custom thumbnails, for the store to save.
    public var customThumbnailIndex: CustomThumbnailIndex {
        state.withLock { state in
            CustomThumbnailIndex(entries: state.custom.compactMapValues(\.entry))
        }
    }

    /// Takes back the custom thumbnails a store saved, after a restart. Entries whose file is gone
    /// are dropped (and the change handler is called); their task keys are returned, sorted.
    @discardableResult
    public func restoreCustomThumbnails(_ index: CustomThumbnailIndex) -> [String] {
        guard let directory = customThumbnailDirectory else { return index.entries.keys.sorted() }
        var restored: [String: CustomThumbnail] = [:]
        var dropped: [String] = []
        for (taskKey, entry) in index.entries {
            if directory.contains(entry) {
                restored[taskKey] = CustomThumbnail(
                    original: nil, entry: entry, contentIdentifier: entry.contentIdentifier)
            } else {
                dropped.append(taskKey)
            }
        }
        state.withLock { state in
            for (taskKey, record) in restored { state.custom[taskKey] = record }
        }
        if !dropped.isEmpty { customThumbnailIndexChanged() }
        return dropped.sorted()
    }

    // MARK: Internals

    private func clamped(_ height: Int) -> Int {
        min(max(height, 1), configuration.maximumTargetHeight)
    }

    private static let customProcessorPrefix = "peregrine.custom.v1."

    private func plan(for source: ThumbnailSource, height: Int) -> Plan {
        let tolerance = configuration.heightTolerance
        let kind = fileType(of: source)
        if let custom = state.withLock({ $0.custom[source.taskKey] }) {
            if let original = custom.original, abs(original.height - height) <= tolerance { return .ready(original) }
            let key = ThumbnailCacheKey(
                taskKey: source.taskKey,
                processorIdentifier: Self.customProcessorPrefix + custom.contentIdentifier + "."
                    + configuration.encoding.identifier,
                targetHeight: height)
            if let hit = cache.memoryValue(forKey: key, heightTolerance: tolerance) { return .ready(hit) }
            let directory = customThumbnailDirectory
            let encoding = configuration.encoding
            let limits = configuration.decodingLimits
            let work = Work(
                sourcePath: nil,
                policy: custom.entry == nil ? .memoryOnly : configuration.cachePolicy,
                make: {
                    guard let original = try custom.original ?? custom.entry.flatMap({ try directory?.read($0) })
                    else { throw ThumbnailError(.unreadableFile, "the custom thumbnail's file is gone") }
                    if original.height == height, original.format == encoding.format { return original }
                    return try encoding.encode(original.decoded(limits: limits).resized(toHeight: height))
                })
            return .make(key, work, kind)
        }
        let processor: (any ThumbnailProcessor)? =
            switch kind {
            case .image: configuration.imageProcessor
            case .video: configuration.videoProcessor
            default: nil
            }
        guard let processor else {
            return .iconOnly(kind, ThumbnailError(.noThumbnail, "\(kind.rawValue) files have a type icon only"))
        }
        guard processor.isAvailable else {
            return .iconOnly(kind, ThumbnailError(.videoToolUnavailable, "\(processor.identifier) is unavailable"))
        }
        guard let path = source.filePath else {
            return .iconOnly(kind, ThumbnailError(.noThumbnail, "the task \(source.taskKey) has no file yet"))
        }
        let key = ThumbnailCacheKey(
            taskKey: source.taskKey, processorIdentifier: processor.identifier, targetHeight: height)
        if let hit = cache.memoryValue(forKey: key, heightTolerance: tolerance) { return .ready(hit) }
        let work = Work(
            sourcePath: path, policy: configuration.cachePolicy,
            make: { try processor.makeThumbnail(for: source, targetHeight: height) })
        return .make(key, work, kind)
    }

    private func schedule(_ key: ThumbnailCacheKey, _ work: Work, completion: @escaping Completion) {
        let isFirst = state.withLock { state -> Bool in
            if state.inFlight[key] != nil {
                state.inFlight[key]!.append(completion)
                return false
            }
            state.inFlight[key] = [completion]
            return true
        }
        guard isFirst else { return }
        jobs.submit {
            let result = self.produce(key, work)
            let waiting = self.state.withLock { $0.inFlight.removeValue(forKey: key) ?? [] }
            for completion in waiting { completion(result) }
        }
    }

    private func produce(_ key: ThumbnailCacheKey, _ work: Work) -> Result<Thumbnail, ThumbnailError> {
        var signature = SourceSignature.none
        if let path = work.sourcePath {
            guard let current = SourceSignature(ofFileAtPath: path) else {
                return .failure(ThumbnailError(.unreadableFile, "\(path) is missing or not a regular file"))
            }
            signature = current
        }
        if let hit = cache.value(forKey: key, heightTolerance: configuration.heightTolerance, signature: signature) {
            return .success(hit)
        }
        if let failure = state.withLock({ $0.failures[key] }), failure.signature == signature {
            return .failure(failure.error)
        }
        do {
            let thumbnail = try work.make()
            try? cache.store(thumbnail, forKey: key, signature: signature, policy: work.policy)
            return .success(thumbnail)
        } catch {
            let reason = error as? ThumbnailError ?? ThumbnailError(.corruptImage, "\(error)")
            state.withLock { state in
                if state.failures.count >= 1024 { state.failures.removeAll() }
                state.failures[key] = Failure(signature: signature, error: reason)
            }
            return .failure(reason)
        }
    }

    private func dropScaledCustomThumbnails(of taskKey: String) {
        cache.memoryStorage.removeAll { key in
            key.taskKey == taskKey && key.processorIdentifier.hasPrefix(Self.customProcessorPrefix)
        }
    }

    private func customThumbnailIndexChanged() {
        guard let handler = configuration.customThumbnailIndexDidChange else { return }
        handler(customThumbnailIndex)
    }
}
