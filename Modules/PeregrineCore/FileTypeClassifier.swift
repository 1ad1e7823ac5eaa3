/// Tells a file's `FileKind` from its name and MIME type, exactly as SDEDownloadManager's
/// `fileType(ofTask:)` does.
///
/// The extension (lower-cased) is looked up in these tables, in this order, and the first match
/// wins: image, video (early: `3gp m4p ogg rm webm`), audio, video, document; no match is
/// `FileKind.other`. Only when that gave audio, video or other does a MIME type refine it:
/// `application/pdf` → document, any other `application/*` → other, `audio/*` → audio,
/// `image/*` → image, `video/*` → video, `text/<sub>` → document when `<sub>` is a document
/// extension, else other. Any other MIME type keeps the extension's answer.
///
/// A value type, safe to share between threads. ``classify`` has the shape of the engine's
/// classifier closure, `(fileName, mimeType) -> FileKind`.
public struct FileTypeClassifier: Sendable {
    /// The extension tables in the order they are consulted.
    public let tables: [(kind: FileKind, extensions: [String])]
    /// Each extension's kind from the first table that lists it.
    let lookup: [String: FileKind]

    /// The seed's tables.
    public static let standard = FileTypeClassifier()

    /// A classifier with `tables` consulted in order (extensions lower-case, without the dot);
    /// by default the seed's tables.
    public init(tables: [(kind: FileKind, extensions: [String])] = FileTypeClassifier.standardTables) {
        self.tables = tables
        var lookup: [String: FileKind] = [:]
        for (kind, extensions) in tables {
            for fileExtension in extensions where lookup[fileExtension] == nil { lookup[fileExtension] = kind }
        }
        self.lookup = lookup
    }

    /// The image extensions.
    public static let imageExtensions = [
        "jpg", "jpeg", "tiff", "tif", "gif", "bmp", "png", "mng", "apng", "svg", "psd",
    ]
    /// The video extensions checked before the audio table (so `ogg` is a video).
    public static let earlyVideoExtensions = ["3gp", "m4p", "ogg", "rm", "webm"]
    /// The audio extensions.
    public static let audioExtensions = [
        "aa", "aac", "aax", "act", "aiff", "amr", "ape", "au", "awb", "dct", "dss", "dvf", "flac", "gsm", "iklax",
        "ivs", "m4a", "m4b", "mmf", "mp3", "mpc", "msv", "oga", "mogg", "opus", "ra", "raw", "sln", "tta", "vox",
        "wav", "wma", "wv",
    ]
    /// The video extensions checked after the audio table.
    public static let videoExtensions = [
        "mkv", "flv", "vob", "ogv", "drc", "gifv", "avi", "mov", "qt", "wmv", "yuv", "rmvb", "asf", "amv", "mp4",
        "m4v", "mpg", "mp2", "mpeg", "mpe", "mpv", "m2v", "svi", "3g2", "mxf", "roq", "nsv", "f4v", "f4p", "f4a",
        "f4b",
    ]
    /// The document extensions (also the `text/<sub>` subtypes that make a document).
    public static let documentExtensions = [
        "pdf", "txt", "text", "srt", "ass", "rtf", "pages", "key", "numbers", "doc", "docx", "ppt", "pptx", "xls",
        "xlsm", "xlsb", "wpd", "wp", "wp7", "fb2", "odt", "sxw", "epub", "md",
    ]

    /// The seed's tables, in the order they are consulted.
    public static let standardTables: [(kind: FileKind, extensions: [String])] = [
        (.image, imageExtensions),
        (.video, earlyVideoExtensions),
        (.audio, audioExtensions),
        (.video, videoExtensions),
        (.document, documentExtensions),
    ]

    /// The kind of a file named `fileName` (a name or a path; only the last component counts)
    /// served as `mimeType` (parameters such as `; charset=utf-8` are ignored).
    public func fileType(ofFileNamed fileName: String, mimeType: String? = nil) -> FileKind {
        let fileExtension = Self.fileExtension(of: fileName)
        let byExtension = kind(ofExtension: fileExtension)
        guard byExtension == .audio || byExtension == .video || byExtension == .other,
            let mimeType, let refined = refine(mimeType: mimeType)
        else { return byExtension }
        return refined
    }

    /// The classifier as the engine's closure type, `(fileName, mimeType) -> FileKind`.
    public var classify: @Sendable (String, String?) -> FileKind {
        let classifier = self
        return { name, mimeType in classifier.fileType(ofFileNamed: name, mimeType: mimeType) }
    }

    /// The kind the extension tables alone give `fileExtension` (lower-case, no dot).
    public func kind(ofExtension fileExtension: String) -> FileKind {
        lookup[fileExtension] ?? .other
    }

    /// The lower-cased extension of the last path component, without the dot; empty for none
    /// (a name starting with its only dot, such as `.profile`, has none).
    public static func fileExtension(of fileName: String) -> String {
        let name = fileName.lastIndex(of: "/").map { fileName[fileName.index(after: $0)...] } ?? Substring(fileName)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }

    /// The kind a MIME type decides, or `nil` when it decides nothing.
    func refine(mimeType: String) -> FileKind? {
        let essence = mimeType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        let parts = essence.trimmingWhitespace().lowercased().split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let type = parts[0]
        let subtype = String(parts[1])
        switch type {
        case "application": return subtype == "pdf" ? .document : .other
        case "audio": return .audio
        case "image": return .image
        case "video": return .video
        case "text": return kind(ofExtension: subtype) == .document ? .document : .other
        default: return nil
        }
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
