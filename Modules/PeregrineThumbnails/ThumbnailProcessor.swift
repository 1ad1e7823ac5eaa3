/// Makes a thumbnail from a task's file — Kingfisher's processor idea: the ``identifier`` names
/// the processor and every option that changes its output, and is part of every cache key, so
/// thumbnails made differently never mix.
///
/// Implementation requirements: ``makeThumbnail(for:targetHeight:)`` is called on the
/// thumbnailer's worker threads, may block (decoding, running a program), must be bounded in time
/// and memory for any input, and reports failures by throwing (preferably a ``ThumbnailError``);
/// it must never crash on bad files. The result should be `targetHeight` pixels high.
public protocol ThumbnailProcessor: Sendable {
    /// A stable name for the processor and its output-changing options, such as
    /// `peregrine.image.v1.png6`.
    var identifier: String { get }

    /// Whether the processor can work on this machine (the video one needs `ffmpeg`). When not,
    /// files get their type icon.
    var isAvailable: Bool { get }

    /// Makes the thumbnail of `source`'s file, `targetHeight` pixels high.
    func makeThumbnail(for source: ThumbnailSource, targetHeight: Int) throws -> Thumbnail
}

extension ThumbnailProcessor {
    /// Available by default.
    public var isAvailable: Bool { true }
}
