extension DownloadURL {
    /// A URL string as a log line may show it: credentials in it (`user:password@`) replaced
    /// by `***`, so that a log never holds a secret.
    package static func loggable(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://")?.upperBound else { return url }
        let authorityEnd = url[schemeEnd...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        guard let at = url[schemeEnd..<authorityEnd].lastIndex(of: "@") else { return url }
        var redacted = url
        redacted.replaceSubrange(schemeEnd..<at, with: "***")
        return redacted
    }
}
