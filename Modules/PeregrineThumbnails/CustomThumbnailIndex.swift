/// The persisted custom thumbnails, as a small Codable value for the task store to save with the
/// rest of the manager's state (SDEDownloadManager kept a "custom thumbnail info" part).
///
/// The images themselves live in a ``CustomThumbnailDirectory``; this only says which file
/// belongs to which task. Hand it back with ``Thumbnailer/restoreCustomThumbnails(_:)`` after a
/// restart.
public struct CustomThumbnailIndex: Sendable, Hashable, Codable {
    /// One persisted custom thumbnail.
    public struct Entry: Sendable, Hashable, Codable {
        /// The image file's name inside the directory.
        public var fileName: String
        /// Width in pixels.
        public var width: Int
        /// Height in pixels.
        public var height: Int
        /// The pixel layout.
        public var pixelFormat: ThumbnailPixelFormat
        /// The encoding of the file.
        public var format: ImageFormat
        /// A hash of the image data: part of the cache keys of its scaled copies.
        public var contentIdentifier: String

        /// An entry with the given values.
        public init(
            fileName: String, width: Int, height: Int, pixelFormat: ThumbnailPixelFormat, format: ImageFormat,
            contentIdentifier: String
        ) {
            self.fileName = fileName
            self.width = width
            self.height = height
            self.pixelFormat = pixelFormat
            self.format = format
            self.contentIdentifier = contentIdentifier
        }
    }

    /// Entries by task key.
    public var entries: [String: Entry]

    /// An index with the given entries.
    public init(entries: [String: Entry] = [:]) {
        self.entries = entries
    }
}
