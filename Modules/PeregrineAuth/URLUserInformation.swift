/// Credentials written inside a URL (`https://user:secret@host/file`): taken out, so that the
/// URL can be stored, logged and printed, and the ``Credential`` kept apart — in a
/// ``CredentialStore`` for the URL's origin, answering its challenges only.
public enum URLUserInformation {
    /// The URL without `user[:password]@`, and the credential it held (percent-escapes decoded;
    /// an empty password when there was none). The URL comes back unchanged, with no credential,
    /// when it has no user information.
    public static func split(_ url: String) -> (url: String, credential: Credential?) {
        guard let range = range(in: url) else { return (url, nil) }
        let userInformation = url[range]
        var stripped = url
        stripped.removeSubrange(range.lowerBound..<url.index(after: range.upperBound))  // with the "@"
        let parts = userInformation.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let user = percentDecoded(parts[0])
        let password = parts.count > 1 ? percentDecoded(parts[1]) : ""
        return (stripped, Credential(user: user, password: password))
    }

    /// `url` with the password of its user information replaced by `***`: the only form of a
    /// URL given with credentials that may be printed.
    public static func redacted(_ url: String) -> String {
        guard let range = range(in: url) else { return url }
        let userInformation = url[range]
        guard let colon = userInformation.firstIndex(of: ":") else { return url }
        var text = url
        text.replaceSubrange(userInformation.index(after: colon)..<range.upperBound, with: "***")
        return text
    }

    /// The `user:password` part between `scheme://` and the last `@` before the path, if any.
    private static func range(in url: String) -> Range<String.Index>? {
        guard let schemeEnd = url.firstRange(of: "://") else { return nil }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd =
            url[authorityStart...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? url.endIndex
        guard let at = url[authorityStart..<authorityEnd].lastIndex(of: "@") else { return nil }
        return authorityStart..<at
    }

    /// `%XX` escapes decoded (RFC 3986); the text as it is when an escape is malformed or the
    /// bytes are no UTF-8.
    static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        let utf8 = text.utf8
        var index = utf8.startIndex
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first < utf8.endIndex, utf8.index(after: first) < utf8.endIndex,
                    let value = UInt8(String(text[first..<utf8.index(first, offsetBy: 2)]), radix: 16)
                else { return String(text) }
                bytes.append(value)
                index = utf8.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? String(text)
    }
}
