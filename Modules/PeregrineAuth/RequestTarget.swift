import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The request-target a transport sends for a URL, which Digest's `uri` must repeat exactly.
enum RequestTarget {
    /// The origin-form: the percent-encoded path (`/` when empty) and `?query` when present.
    static func originForm(of url: DownloadURL) -> String {
        let components = URLComponents(url: url.url, resolvingAgainstBaseURL: false)
        var path = components?.percentEncodedPath ?? "/"
        if path.isEmpty { path = "/" }
        if let query = components?.percentEncodedQuery { path += "?" + query }
        return path
    }

    /// The absolute-form a forward proxy receives: the URL without its fragment.
    static func absoluteForm(of url: DownloadURL) -> String {
        url.string.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
            ?? url.string
    }

    /// The path of a URL, percent-encoded, `/` when empty.
    static func path(of url: DownloadURL) -> String {
        let path = URLComponents(url: url.url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/"
        return path.isEmpty ? "/" : path
    }

    /// The directory of a path: everything up to and including its last `/`, the scope RFC 7617
    /// §2.2 lets a client assume for Basic credentials.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "/" }
        return String(path[...slash])
    }
}
