/// What a download queue does — its list, operations, trash, queries, meta info, limits and
/// events — for the queue itself and for a facade that holds one (`Peregrine`'s
/// `DownloadManager`). Every member is written once, in extensions of this protocol, on
/// ``downloadQueue``; a facade conforms by holding a queue.
public protocol DownloadQueueing: AnyObject, Sendable {
    /// The queue the members act on.
    var downloadQueue: DownloadQueue { get }
}
