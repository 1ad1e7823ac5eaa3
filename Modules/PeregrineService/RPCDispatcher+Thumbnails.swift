import Peregrine
import Synchronization

extension RPCDispatcher {
    /// The thumbnail of a download, `height` pixels high: the real one (an image or video file
    /// that exists) when the thumbnailer makes it within `patience`, else what it has at once
    /// (a cached picture or the file type's icon); nil for an unknown GID.
    func thumbnail(gid text: String, height: Int, patience: Duration = .seconds(2)) async throws(RPCError)
        -> Thumbnail?
    {
        let (_, url) = try task(text)
        let manager = self.manager
        let once = OnceContinuation()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Thumbnail?, Never>) in
            once.set(continuation)
            let immediate = manager.requestThumbnail(forTask: url, targetHeight: height) { made in
                once.resume(returning: made)
            }
            // The handler is called only when a real thumbnail can be made: wait for it a
            // little, then settle for the picture at hand.
            Task {
                try? await Task.sleep(for: patience)
                once.resume(returning: immediate)
            }
        }
    }
}

/// A continuation resumed by whichever comes first.
private final class OnceContinuation: Sendable {
    private let continuation = Mutex<CheckedContinuation<Thumbnail?, Never>?>(nil)

    func set(_ continuation: CheckedContinuation<Thumbnail?, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(returning value: Thumbnail?) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
