/// The kind of a downloaded file, as SDEDownloadManager's `fileType(ofTask:)` reports it.
///
/// The classification rules (extension tables, then MIME refinement) are ``FileTypeClassifier``'s.
public enum FileKind: String, Sendable, Hashable, Codable, CaseIterable {
    case image = "Image"
    case audio = "Audio"
    case video = "Video"
    case document = "Document"
    case other = "Other"
}
