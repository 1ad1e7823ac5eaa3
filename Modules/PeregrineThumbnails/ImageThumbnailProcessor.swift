/// Thumbnails of image files: JPEG through TurboJPEG with DCT scaling and EXIF orientation, PNG
/// through libpng with box shrinking while reading, then area averaging to the target height and
/// the configured encoding. The format is judged by the file's signature, never its extension.
public struct ImageThumbnailProcessor: ThumbnailProcessor {
    /// How thumbnails are encoded.
    public var encoding: ThumbnailEncoding
    /// The bounds on what is read and decoded.
    public var limits: ImageDecodingLimits

    /// A processor with the given encoding and limits.
    public init(encoding: ThumbnailEncoding = .png, limits: ImageDecodingLimits = .standard) {
        self.encoding = encoding
        self.limits = limits
    }

    public var identifier: String { "peregrine.image.v1.\(encoding.identifier)" }

    /// Reads and thumbnails `source.filePath`.
    ///
    /// - Throws: ``ThumbnailError`` — ``ThumbnailError/Code/noThumbnail`` without a file path,
    ///   else as ``makeThumbnail(fromImageData:targetHeight:)`` and the file read.
    public func makeThumbnail(for source: ThumbnailSource, targetHeight: Int) throws -> Thumbnail {
        guard let path = source.filePath else {
            throw ThumbnailError(.noThumbnail, "the task \(source.taskKey) has no file yet")
        }
        return try makeThumbnail(
            fromImageData: SourceFile.read(path, maximumBytes: limits.maximumFileBytes),
            targetHeight: targetHeight)
    }

    /// Thumbnails an encoded PNG or JPEG held in memory.
    ///
    /// - Throws: ``ThumbnailError`` — unsupported format, corrupt image, image too large.
    public func makeThumbnail(fromImageData bytes: [UInt8], targetHeight: Int) throws -> Thumbnail {
        let height = max(1, targetHeight)
        let image = try ImageDecoder.decode(bytes, targetHeight: height, limits: limits)
        return try encoding.encode(image.resized(toHeight: height))
    }
}
