import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Something that happened in a ``DownloadEngine``, for modern code: see
/// ``DownloadEngine/events()``.
public enum EngineEvent: Sendable, Hashable {
    /// A task joined the engine.
    case added(String)
    /// A task waits in its list's queue for a slot.
    case waiting(String)
    /// A task started (or continued) downloading, at this byte of the file.
    case started(String, offset: Int64)
    /// Bytes arrived; at most four times a second per task (see
    /// ``DownloadEngine/Configuration/progressInterval``).
    case progress(String, receivedBytes: Int64, expectedBytes: Int64?)
    /// A task paused with its connection kept.
    case paused(String)
    /// A task stopped: `stopped` with a resume record, or `pending` without one.
    case stopped(String)
    /// A task finished; its file is at `file`, a file URL (every location in the API is one;
    /// `file.path` is the path).
    case finished(String, file: URL)
    /// A task failed.
    case failed(String, FailureReason)
    /// A transfer of a task failed and the retry policy waits `after` (on the engine's clock)
    /// before trying again; the task stays `downloading`.
    case retrying(String, after: Duration, reason: FailureReason)
    /// A task left the engine.
    case deleted(String)
    /// A task's file was deleted; the task stays, `pending`.
    case fileDeleted(String)
    /// A stored task came back changed after the process ended while it ran (SDE's
    /// "restored from app force quit"), or with its finished file missing.
    case restored(String, previousState: DownloadState)

    /// The URL string of the task concerned.
    public var urlString: String {
        switch self {
        case .added(let url), .waiting(let url), .started(let url, _), .progress(let url, _, _), .paused(let url),
            .stopped(let url), .finished(let url, _), .failed(let url, _), .deleted(let url), .fileDeleted(let url),
            .restored(let url, _), .retrying(let url, _, _):
            url
        }
    }
}
