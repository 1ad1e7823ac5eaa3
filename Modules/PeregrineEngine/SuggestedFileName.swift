import PeregrineCore

/// Chooses a download's file name: from `Content-Disposition` (RFC 6266, `filename*` first),
/// else the last component of the URL path (percent-decoded; the URL that answered, after
/// redirects, then the one asked for), else the host — always through ``FileNameSanitizer``.
public enum SuggestedFileName {
    /// The sanitized name for a response.
    ///
    /// - Parameters:
    ///   - contentDisposition: the `Content-Disposition` value, if any.
    ///   - effectiveURL: the URL that answered, after redirects, if known.
    ///   - url: the URL the task was added with.
    public static func make(contentDisposition: String?, effectiveURL: String?, url: DownloadURL) -> String {
        if let name = contentDisposition.flatMap(ContentDisposition.init(headerValue:))?.preferredFileName,
            let safe = FileNameSanitizer.clean(name)
        {
            return safe
        }
        for candidate in effectiveURL == nil || effectiveURL == url.string ? [url.string] : [effectiveURL!, url.string]
        {
            if let name = lastPathComponent(of: candidate), let safe = FileNameSanitizer.clean(name) {
                return safe
            }
        }
        return FileNameSanitizer.sanitize(url.host)
    }

    /// The name for a task before any response: from its URL path, else its host.
    public static func make(for url: DownloadURL) -> String {
        make(contentDisposition: nil, effectiveURL: nil, url: url)
    }

    /// The last non-empty segment of an absolute URL's path, percent-decoded: what follows
    /// the authority, up to the query or fragment. Nil when the path has no segment.
    static func lastPathComponent(of urlString: String) -> String? {
        var urlString = urlString
        return urlString.withUTF8 { bytes -> String? in
            let slash = UInt8(ascii: "/")
            var index = 0
            var authority = -1
            while index + 2 < bytes.count {
                if bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == slash, bytes[index + 2] == slash {
                    authority = index + 3
                    break
                }
                index += 1
            }
            guard authority >= 0 else { return nil }
            var end = authority
            var pathStart = -1
            while end < bytes.count, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
                if pathStart < 0, bytes[end] == slash { pathStart = end }
                end += 1
            }
            guard pathStart >= 0 else { return nil }
            while end > pathStart, bytes[end - 1] == slash { end -= 1 }
            var start = end
            while start > pathStart, bytes[start - 1] != slash { start -= 1 }
            guard start < end else { return nil }
            return PercentDecoding.string(
                String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
        }
    }
}
