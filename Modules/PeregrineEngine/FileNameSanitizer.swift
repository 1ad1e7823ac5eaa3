/// Makes a name from a server or a URL safe to create inside the download directory.
///
/// The result is never empty, never `.` or `..`, never starts with a dot (no hidden files),
/// holds no path separator (`/` or `\`: only the last component of a path is kept), no NUL,
/// no control character (C0, DEL, C1) and no invisible bidirectional or format character (so
/// `txt.exe` cannot pose as `exe.txt`), and is at most ``maximumByteCount`` bytes of UTF-8,
/// cut at a character boundary with its extension kept.
public enum FileNameSanitizer {
    /// The longest name most Linux file systems accept, in bytes.
    public static let maximumByteCount = 255
    /// The longest extension (dot included, in bytes) kept when a name is shortened.
    public static let maximumExtensionByteCount = 32
    /// The name used when nothing usable is left.
    public static let defaultName = "download"

    /// Returns a safe version of `name`, or of `fallback` when nothing of `name` survives.
    public static func sanitize(_ name: String, fallback: String = defaultName) -> String {
        if let safe = clean(name) { return safe }
        return clean(fallback) ?? defaultName
    }

    /// The safe version of `name`, or nil when nothing survives.
    ///
    /// Works on Unicode scalars, not Characters: a separator or a dot followed by combining
    /// marks (`a/\u{301}b`, `.\u{301}bashrc`) is one Character that is neither, and must still
    /// split the path or be stripped.
    public static func clean(_ name: String) -> String? {
        if isPlainlySafe(name) { return name }
        let components = name.unicodeScalars.split(whereSeparator: { $0 == "/" || $0 == "\\" })
        let component =
            components.last(where: { !$0.allSatisfy(\.properties.isWhitespace) }) ?? Substring().unicodeScalars
        var scalars = component.filter { !isForbidden($0) }[...]
        // No leading dot (a hidden file), no leading space, and no combining mark left dangling
        // at the start once a dot before it is gone.
        while let first = scalars.first, first == "." || first.properties.isWhitespace || isCombiningMark(first) {
            scalars.removeFirst()
        }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        guard !scalars.isEmpty else { return nil }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        return limited(String(text), to: maximumByteCount)
    }

    /// The safe version of a name the user chose (`DownloadItem.preferredFileName`, `-o`): as
    /// ``clean(_:)``, except that leading dots stay — who asks for `.hidden` gets a hidden file —
    /// unless the name would pass for one of the engine's temporary files (`.peregrine-…`).
    public static func cleanChosen(_ name: String) -> String? {
        let dots = name.prefix(while: { $0 == "." })
        guard !dots.isEmpty, !name.contains(where: { $0 == "/" || $0 == "\\" }) else { return clean(name) }
        guard let rest = clean(String(name.dropFirst(dots.count))) else { return nil }
        let chosen = dots + rest
        guard !chosen.hasPrefix(".peregrine-") else { return rest }
        return limited(String(chosen), to: maximumByteCount)
    }

    /// `name` cut to at most `byteCount` bytes of UTF-8 at a character boundary, keeping its
    /// extension when the extension is short enough.
    public static func limited(_ name: String, to byteCount: Int) -> String {
        guard name.utf8.count > byteCount else { return name }
        let parts = FileNameParts(name)
        let extensionBytes = parts.pathExtension.utf8.count
        if !parts.stem.isEmpty, extensionBytes <= maximumExtensionByteCount, extensionBytes < byteCount {
            return prefix(of: parts.stem, bytes: byteCount - extensionBytes) + parts.pathExtension
        }
        return prefix(of: name, bytes: byteCount)
    }

    /// The longest run of whole characters from the start of `text` within `bytes` bytes.
    ///
    /// A first character larger than the budget (a letter with hundreds of combining marks) is
    /// cut between its scalars instead, so that a non-empty name never shrinks to nothing.
    static func prefix(of text: String, bytes: Int) -> String {
        var result = ""
        var count = 0
        for character in text {
            let size = character.utf8.count
            guard count + size <= bytes else {
                if result.isEmpty {
                    for scalar in character.unicodeScalars {
                        let scalarSize = UTF8.width(scalar)
                        guard count + scalarSize <= bytes else { break }
                        result.unicodeScalars.append(scalar)
                        count += scalarSize
                    }
                }
                break
            }
            result.append(character)
            count += size
        }
        return result
    }

    /// The common case, decided without building anything: printable ASCII without a
    /// separator, not starting with a dot or ending with a space, short enough.
    private static func isPlainlySafe(_ name: String) -> Bool {
        var count = 0
        for byte in name.utf8 {
            guard byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "/"), byte != UInt8(ascii: "\\") else {
                // A space inside is fine; anything else goes the long way.
                if byte == 0x20, count > 0 {
                    count += 1
                    continue
                }
                return false
            }
            if count == 0, byte == UInt8(ascii: ".") { return false }
            count += 1
        }
        return count > 0 && count <= maximumByteCount && name.utf8.last != 0x20
    }

    private static func isBlank(_ text: Substring) -> Bool {
        text.allSatisfy { $0.isWhitespace }
    }

    /// Marks that attach to the character before them (categories Mn, Mc, Me).
    static func isCombiningMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }

    /// Control characters and the invisible characters that reorder or hide text.
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2064, 0x2066...0x206F, 0xFEFF, 0xFFF9...0xFFFB: true
        default: false
        }
    }
}

/// A file name split into a stem and an extension (dot included), aware of compound
/// extensions such as `.tar.gz`: `archive.tar.gz` → `archive` + `.tar.gz`.
struct FileNameParts: Sendable, Hashable {
    var stem: String
    var pathExtension: String

    private static let compoundExtensions = [".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tar.lz", ".tar.z"]

    init(_ name: String) {
        let lower = name.lowercased()
        for compound in Self.compoundExtensions where lower.hasSuffix(compound) && lower.count > compound.count {
            let split = name.index(name.endIndex, offsetBy: -compound.count)
            stem = String(name[..<split])
            pathExtension = String(name[split...])
            return
        }
        if let dot = name.lastIndex(of: "."), dot != name.startIndex, name.index(after: dot) != name.endIndex {
            stem = String(name[..<dot])
            pathExtension = String(name[dot...])
        } else {
            stem = name
            pathExtension = ""
        }
    }

    /// `stem (n).ext`, shortened so that it stays within ``FileNameSanitizer/maximumByteCount``.
    func numbered(_ number: Int) -> String {
        let suffix = " (\(number))" + pathExtension
        let room = FileNameSanitizer.maximumByteCount - suffix.utf8.count
        let stem = room > 0 ? FileNameSanitizer.prefix(of: self.stem, bytes: room) : ""
        let name = stem + suffix
        return name.utf8.count <= FileNameSanitizer.maximumByteCount
            ? name : FileNameSanitizer.prefix(of: name, bytes: FileNameSanitizer.maximumByteCount)
    }
}
