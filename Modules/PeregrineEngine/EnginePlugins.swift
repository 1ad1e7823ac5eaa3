import PeregrineChecksums
import PeregrineCore
import PeregrineTransport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Changes each request before it is sent, per task: headers, a rate limit, timeouts, a trust
/// policy. The download service's per-download options (`header`, `max-download-limit`) and
/// `peregrine get`'s `--header` plug in here. Authentication does not: `PeregrineAuth` wraps
/// the transport, because a challenge needs a second request the engine never sees.
///
/// Called outside the engine's lock, on the thread that starts the transfer; must be quick
/// and must not block on the engine.
public protocol RequestAdapter: Sendable {
    /// Adapts `request` (whose URL, `Range` and `If-Range` the engine has set) for `task`.
    func adapt(_ request: inout TransferRequest, for task: TaskContext)
}

/// Decides whether a failed transfer is tried again before the task fails: a dropped
/// connection, a 503 after its Retry-After, a checksum mismatch (Reed retries three times).
/// ``BackoffRetryPolicy`` is the one that ships.
///
/// Called outside the engine's lock on the transport's thread; must be quick.
public protocol RetryPolicy: Sendable {
    /// What to do after `failure`; ``TaskContext/retryCount`` says how many retries came before.
    func decision(after failure: TransferFailure, for task: TaskContext) -> RetryDecision
}

/// A ``RetryPolicy``'s answer.
public enum RetryDecision: Sendable, Hashable {
    /// Let the task fail.
    case fail
    /// Try again at once, from the bytes already on disk when the server allows resuming.
    case retry
    /// Try again at once from the first byte, discarding the partial file.
    case retryFromZero
    /// Try again once the delay has passed on the engine's clock, from the bytes already on
    /// disk when the server allows resuming (from the first byte after a checksum mismatch). The
    /// task stays `downloading` and keeps its slot meanwhile; ``EngineEvent/retrying(_:after:reason:)``
    /// says so, and pausing, stopping or deleting it cancels the wait.
    case retryAfter(Duration)
}

/// Checks a downloaded file before it is renamed into place: the seam where checksum
/// verification plugs in, so the hash is computed while downloading.
///
/// For each transfer the engine asks for a sink wrapping its file sink (a hashing decorator
/// that passes every write on); after the transfer succeeded and the length matched, it asks
/// for a verdict, with that same sink. A resumed transfer starts at
/// ``TaskContext/startOffset``: the bytes before it are in ``TaskContext/temporaryFilePath``.
/// Both calls run on the transport's thread, outside the engine's lock.
public protocol TaskFileVerifier: Sendable {
    /// The sink the transport writes to for this transfer; return `sink` to not hash.
    func sink(wrapping sink: any TransferSink, for task: TaskContext) -> any TransferSink
    /// Nil when the complete temporary file may be renamed into place, else why not
    /// (`FailureReason.Code.verification`).
    func verify(_ sink: any TransferSink, for task: TaskContext) -> FailureReason?
    /// The verdict with the `VerificationResult` the engine keeps beside the task's state;
    /// a `VerificationResult.mismatch(expected:actual:)` is retried per the engine's
    /// `VerificationRetryPolicy`. The default calls ``verify(_:for:)`` and keeps
    /// `VerificationResult.unverified`.
    func verdict(_ sink: any TransferSink, for task: TaskContext) -> TaskFileVerdict
    /// Checks a task's checksum specification when the task is added, so that a bad one is
    /// refused at once rather than found at the end of the download. The default accepts
    /// anything (the specification is opaque to the engine).
    ///
    /// - Throws: why the specification cannot be used, e.g.
    ///   `VerificationError.Code.unsupportedAlgorithm` or `VerificationError.Code.invalidHex`.
    func validate(checksum specification: String) throws(VerificationError)
}

extension TaskFileVerifier {
    public func verdict(_ sink: any TransferSink, for task: TaskContext) -> TaskFileVerdict {
        TaskFileVerdict(result: .unverified, failure: verify(sink, for: task))
    }

    public func validate(checksum specification: String) throws(VerificationError) {}
}

/// Receives every change to the engine's task records: the seam where a store plugs in.
///
/// Called outside the engine's lock, on the thread of the operation or transfer that made the
/// change, possibly from several threads at once: apply changes by their
/// ``TaskRecordChange/sequence``. A change does not wait for the store.
public protocol TaskRecordObserver: Sendable {
    /// Records changed (or left).
    func engineDidChange(_ changes: [TaskRecordChange])

    /// Records changed, and the engine must know when they are durable: `whenDurable` runs once
    /// they are (on any thread, at most once; never when they could not be stored). The engine
    /// asks this for a finished task whose file it placed, and removes the file's temporary
    /// name only then, so that after a crash in between it finds and adopts the placed file
    /// instead of downloading it again. The default records the changes and calls
    /// `whenDurable` at once, for observers that keep nothing across a crash.
    func engineDidChange(_ changes: [TaskRecordChange], whenDurable: @escaping @Sendable () -> Void)
}

extension TaskRecordObserver {
    public func engineDidChange(_ changes: [TaskRecordChange], whenDurable: @escaping @Sendable () -> Void) {
        engineDidChange(changes)
        whenDurable()
    }
}

/// Receives the engine's events as they happen, without the hop through an `AsyncStream` that
/// ``DownloadEngine/events()`` takes: the seam a layer above the engine forwards through.
///
/// Called outside the engine's lock, on the thread that made the change, possibly from several
/// threads at once. `section` numbers the engine's locked sections that hand the observers
/// anything — 1, 2, 3…, each number once, in the order the sections ran — so an observer that
/// keeps the order across threads restores it by the number (``TaskRecordObserver`` gets the
/// same section's record changes afterwards, on the same thread, each with the section's number
/// as its ``TaskRecordChange/sequence``). A section with record changes but no event is handed
/// over too, with no event, so that no number is missing. Whatever the observer returns runs on
/// the same thread once the engine's call is done with the section.
public protocol EngineEventObserver: Sendable {
    /// A section's events, in order (possibly none); returns what to run afterwards.
    func engineDidEmit(_ events: [EngineEvent], section: UInt64) -> (@Sendable () -> Void)?
}

/// Receives each section of the engine whole — its events and its record changes — inside the
/// step that ends it, so sections come in the order of the steps whichever thread made them.
package protocol EngineSectionObserver: Sendable {
    /// Takes a section (either list may be empty), inside the step: it must neither wait nor
    /// call out of its own bookkeeping here. `beforeRecording`, when given, runs before the
    /// changes are written (the directory's sync: a record never names a file the directory
    /// may lose); `whenDurable`, once they are durable (see ``TaskRecordObserver``). Returns
    /// what the engine runs after the step, before the section's other effects: with record
    /// changes it returns once they are recorded, and it returns what the engine runs after its
    /// callbacks.
    func engineDidSeal(
        events: [EngineEvent], changes: [TaskRecordChange], beforeRecording: (@Sendable () -> Void)?,
        whenDurable: (@Sendable () -> Void)?
    ) -> @Sendable () -> (@Sendable () -> Void)?
}

/// Says what kind of file a task downloads: the seam where the thumbnails module's
/// classification plugs in. The default answers `FileKind.other`.
public typealias FileKindClassifier = @Sendable (_ fileName: String, _ mimeType: String?) -> FileKind

/// Called once when a task finishes (with the file's URL) or fails — never when it is
/// paused, stopped or deleted.
public typealias TaskCompletionHandler = @Sendable (_ urlString: String, _ result: Result<URL, FailureReason>) -> Void
