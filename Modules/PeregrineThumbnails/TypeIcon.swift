/// One of the icons Peregrine ships, drawn for it (see `Icons/make-icons.py`).
public enum TypeIcon: String, Sendable, Hashable, CaseIterable {
    /// Images.
    case image = "Image"
    /// Audio other than music.
    case audio = "Audio"
    /// Music: audio files named `mp3`, `vox`, `wav` or `wma`.
    case music = "Music"
    /// Videos.
    case video = "Video"
    /// Documents.
    case document = "Document"
    /// Everything else.
    case other = "Other"
    /// `.pdf` files.
    case pdf = "PDF"
    /// `.rar` files.
    case rar = "RAR"
    /// `.zip` files.
    case zip = "ZIP"

    /// The audio extensions shown with the music icon.
    public static let musicExtensions: Set<String> = ["mp3", "vox", "wav", "wma"]

    /// The built-in icon for a file of `kind` with `fileExtension` (lower-case): the extension's
    /// own icon when Peregrine has one, else the kind's.
    public init(kind: FileKind, fileExtension: String) {
        switch fileExtension {
        case "pdf": self = .pdf
        case "rar": self = .rar
        case "zip": self = .zip
        default:
            switch kind {
            case .image: self = .image
            case .audio: self = Self.musicExtensions.contains(fileExtension) ? .music : .audio
            case .video: self = .video
            case .document: self = .document
            case .other: self = .other
            }
        }
    }

    /// Whether the icon belongs to an extension rather than a kind.
    public var isExtensionIcon: Bool { self == .pdf || self == .rar || self == .zip }

    /// The resource's path inside the module's `Icons` folder, without `.png`.
    var resourceName: String { (isExtensionIcon ? "Extensions/" : "Kinds/") + rawValue }
}
