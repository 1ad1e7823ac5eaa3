import PeregrineCore
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Type icons: the ones Peregrine ships (512 × 512 PNGs, resources of this module) and a user
/// directory of `<EXT>.png` files that override or add icons by extension (`PSD.png` for every
/// `.psd` file), as SDEDownloadManager's `FileExtensionIcon` assets did.
///
/// Icons are scaled to the requested height with area averaging (square, PNG with alpha) and the
/// scaled ones are kept, so a repeated request is a lookup. A user icon that cannot be decoded is
/// ignored in favour of the built-in one. Thread-safe.
public final class TypeIconLibrary: Sendable {
    private struct IconKey: Hashable {
        var name: String
        var height: Int
    }

    private struct State {
        var customIcons: [String: String] = [:]  // upper-cased extension → path
        var scaled = LeastRecentlyUsedList<IconKey, Thumbnail>()
    }

    /// The directory of `<EXT>.png` files, if any.
    public let customIconDirectory: String?
    /// The largest icon height made; larger requests get this height.
    public let maximumHeight: Int
    private let state = Locked(State())
    private let limits = ImageDecodingLimits(maximumFileBytes: 16 << 20, maximumDecodedPixels: 16_000_000)

    /// A library with the built-in icons and, when given, the `<EXT>.png` files of
    /// `customIconDirectory` (read now; see ``reloadCustomIcons()``).
    public init(customIconDirectory: String? = nil, maximumHeight: Int = 1024) {
        self.customIconDirectory = customIconDirectory
        self.maximumHeight = max(1, maximumHeight)
        reloadCustomIcons()
    }

    /// Reads the custom icon directory again (after files were added or removed).
    public func reloadCustomIcons() {
        var icons: [String: String] = [:]
        if let directory = customIconDirectory,
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory)
        {
            for name in names {
                let parts = name.split(separator: ".")
                guard parts.count == 2, parts[1].lowercased() == "png", !parts[0].isEmpty else { continue }
                icons[parts[0].uppercased()] = PathText.join(directory, name)
            }
        }
        state.withLock { state in
            state.customIcons = icons
            state.scaled.removeAll()
        }
    }

    /// The extensions (upper-case) that have a custom icon.
    public var customIconExtensions: Set<String> {
        state.withLock { Set($0.customIcons.keys) }
    }

    /// The icon for a file named `fileName` of `kind`, `height` pixels high: a custom icon for its
    /// extension, else the built-in one for its extension (PDF, RAR, ZIP), else its kind's.
    public func icon(forFileNamed fileName: String, kind: FileKind, height: Int) -> Thumbnail {
        let fileExtension = FileTypeClassifier.fileExtension(of: fileName)
        let height = min(max(height, 1), maximumHeight)
        if !fileExtension.isEmpty {
            let name = fileExtension.uppercased()
            if let path = state.withLock({ $0.customIcons[name] }),
                let icon = scaledIcon(
                    named: "custom/" + name, height: height,
                    load: { try SourceFile.read(path, maximumBytes: limits.maximumFileBytes) })
            {
                return icon
            }
        }
        return icon(TypeIcon(kind: kind, fileExtension: fileExtension), height: height)
    }

    /// A built-in icon, `height` pixels high.
    public func icon(_ icon: TypeIcon, height: Int) -> Thumbnail {
        let height = min(max(height, 1), maximumHeight)
        if let thumbnail = scaledIcon(named: icon.rawValue, height: height, load: { try Self.builtInData(icon) }) {
            return thumbnail
        }
        return Self.placeholder(height: height)
    }

    /// The PNG data of a built-in icon at its full size (512 × 512).
    public static func builtInData(_ icon: TypeIcon) throws -> [UInt8] {
        guard let text = BuiltInIconData.base64[icon.resourceName], let data = Data(base64Encoded: text) else {
            throw ThumbnailError(.unreadableFile, "the \(icon.rawValue) icon is missing from the module")
        }
        return [UInt8](data)
    }

    private func scaledIcon(named name: String, height: Int, load: () throws -> [UInt8]) -> Thumbnail? {
        let key = IconKey(name: name, height: height)
        if let cached = state.withLock({ $0.scaled.value(for: key) }) { return cached }
        guard let bytes = try? load(),
            let image = try? ImageDecoder.decode(bytes, targetHeight: height, limits: limits),
            let thumbnail = try? ThumbnailEncoding.png.encode(image.resized(toHeight: height))
        else { return nil }
        state.withLock { state in
            state.scaled.set(thumbnail, for: key, cost: thumbnail.cost)
            while state.scaled.count > 256 { state.scaled.removeLeastRecentlyUsed() }
        }
        return thumbnail
    }

    /// A plain grey square, for the case that cannot happen: a built-in icon that is missing.
    static func placeholder(height: Int) -> Thumbnail {
        let pixels = [UInt8](repeating: 0xB0, count: height * height)
        let image = RasterImage(unchecked: height, height: height, pixelFormat: .gray8, pixels: pixels)
        return (try? ThumbnailEncoding.png.encode(image))
            ?? Thumbnail(uncheckedWidth: 0, height: 0, pixelFormat: .gray8, format: .png, data: Data())
    }
}
