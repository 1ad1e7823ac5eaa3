import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Safe local file names for downloads.
///
/// The engine's naming (Content-Disposition first, conflict policies) is fuller; the example
/// keeps to the URL path and the rule that a name never leaves the output directory.
enum FileNaming {
    /// The last path component of the URL, percent-decoded and sanitised; the host when empty.
    static func fileName(for url: DownloadURL) -> String {
        // `lastPathComponent` is already percent-decoded.
        return sanitized(url.url.lastPathComponent) ?? sanitized(url.host) ?? "download"
    }

    /// Removes path separators, control characters and leading dots; nil when nothing is left.
    static func sanitized(_ name: String) -> String? {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            switch scalar.value {
            case 0..<0x20, 0x7F: continue
            case 0x2F, 0x5C: scalars.append("_")  // '/' and '\'
            default: scalars.append(scalar)
            }
        }
        var result = String(scalars).trimmed
        while result.hasPrefix(".") { result.removeFirst() }
        if result.utf8.count > 200 { result = String(result.prefix(200)) }
        return result.isEmpty ? nil : result
    }

    /// `directory + name`, or `name (1).ext`, `name (2).ext`, … : the first that does not exist in `directory`.
    static func freePath(for name: String, in directory: String) -> String {
        var candidate = directory + name
        var number = 1
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let base = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        while access(candidate, F_OK) == 0 {
            candidate = directory + "\(base) (\(number))\(ext)"
            number += 1
        }
        return candidate
    }
}
