import Peregrine
import PeregrineCore
import Synchronization

extension RPCDispatcher {
    /// The thumbnail of a download, `height` pixels high: the real one (an image or video file
    /// that exists) when the thumbnailer makes it within `patience`, else what it has at once
    /// (a cached picture or the file type's icon); nil for an unknown GID.
    ///
    /// On a fleet service, a task of the shared queue that this service does not have gets its
    /// file type's icon (its file is on another host); finding it may ask the database, on the
    /// threads of `BlockingCallExecutor`.
    func thumbnail(gid text: String, height: Int, patience: Duration = .seconds(2)) async throws(RPCError)
        -> Thumbnail?
    {
        guard let queue = configuration.fleetQueue else {
            return try await localThumbnail(gid: text, height: height, patience: patience)
        }
        return try await withTaskExecutorPreference(BlockingCallExecutor.shared) { () async throws(RPCError) in
            let (_, url) = try task(text)
            guard manager.engine.task(url) == nil else {
                return try await localThumbnail(gid: text, height: height, patience: patience)
            }
            guard let entry = try Self.fleetCall({ () throws(StoreError) in try queue.entries([url])[url] }) else {
                return nil
            }
            let task = entry.task
            let source = ThumbnailSource(
                taskKey: url, filePath: nil,
                fileName: task.displayName ?? task.fileName ?? task.preferredFileName ?? Self.nameInURL(url),
                mimeType: task.mimeType, kind: task.kind)
            return manager.thumbnailer.typeIcon(for: source, height: height)
        }
    }

    /// ``thumbnail(gid:height:patience:)`` of a task of this service's manager.
    private func localThumbnail(gid text: String, height: Int, patience: Duration) async throws(RPCError)
        -> Thumbnail?
    {
        let (_, url) = try task(text)
        let manager = self.manager
        let once = OnceContinuation()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Thumbnail?, Never>) in
            once.set(continuation)
            let answer = manager.requestThumbnailTellingWhetherLater(forTask: url, targetHeight: height) { made in
                once.resume(returning: made)
            }
            // The best there is (a cached thumbnail, an icon where nothing better can be made):
            // at once. Else the handler gets the real thumbnail being made: wait for it a little,
            // then settle for the picture at hand.
            guard let answer, !answer.isFinal else {
                once.resume(returning: answer?.thumbnail)
                return
            }
            Task {
                try? await Task.sleep(for: patience)
                once.resume(returning: answer.thumbnail)
            }
        }
    }
}

/// A continuation resumed by whichever comes first.
private final class OnceContinuation: Sendable {
    private let continuation = Locked<CheckedContinuation<Thumbnail?, Never>?>(nil)

    func set(_ continuation: CheckedContinuation<Thumbnail?, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(returning value: Thumbnail?) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
