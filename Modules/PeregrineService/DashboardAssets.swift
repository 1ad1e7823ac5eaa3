import Foundation
import Hummingbird

/// The web dashboard's files (`Dashboard/`, shipped as the target's resources), read once.
///
/// Only the regular files of that one folder whose names are plain (letters, digits, `.`, `-`,
/// `_`, no leading dot) and whose types are known are served; a request names a file of that
/// table or gets 404, so no path can reach outside the folder.
struct DashboardAssets: Sendable {
    /// One file: its bytes and its media type.
    struct Asset: Sendable {
        let body: ByteBuffer
        let contentType: String
    }

    /// The files by name.
    let files: [String: Asset]

    /// The media types of the file types the dashboard uses.
    static let contentTypes = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8",
        "js": "text/javascript; charset=utf-8", "svg": "image/svg+xml", "png": "image/png",
        "ico": "image/x-icon", "json": "application/json",
    ]

    /// Reads the files of `directory`; an empty table when it is missing.
    init(directory: URL?) {
        var files: [String: Asset] = [:]
        let manager = FileManager.default
        if let directory, let names = try? manager.contentsOfDirectory(atPath: directory.path) {
            for name in names where Self.isPlainName(name) {
                let path = directory.appendingPathComponent(name).path
                guard let type = Self.contentTypes[(name as NSString).pathExtension.lowercased()],
                    let attributes = try? manager.attributesOfItem(atPath: path),
                    attributes[.type] as? FileAttributeType == .typeRegular,
                    let data = manager.contents(atPath: path)
                else { continue }
                files[name] = Asset(body: ByteBuffer(bytes: data), contentType: type)
            }
        }
        self.files = files
    }

    /// The files shipped with the package (`Bundle.module`), or none when the resource bundle is
    /// not beside the program: SwiftPM's accessor would stop the process there, and a service
    /// without its dashboard is better than no service.
    static let shipped: DashboardAssets = {
        let bundle = Bundle.main.bundleURL.appendingPathComponent("Peregrine_PeregrineService.resources")
        guard FileManager.default.fileExists(atPath: bundle.path) else { return DashboardAssets(directory: nil) }
        return DashboardAssets(directory: Bundle.module.url(forResource: "Dashboard", withExtension: nil))
    }()

    /// Whether a name is one the table may hold: no separator, no leading dot, no `..`.
    static func isPlainName(_ name: String) -> Bool {
        guard !name.isEmpty, name.count <= 128, !name.hasPrefix(".") else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "-", "_": true
            default: false
            }
        }
    }
}
