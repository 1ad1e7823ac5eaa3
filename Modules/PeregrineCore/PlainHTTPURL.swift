/// The common shape of a download URL, recognised in one pass over its bytes without
/// Foundation's parser: `http` or `https` (any case), `//`, a host of ASCII letters, digits, dots
/// and hyphens (no `xn--`), an optional port in 1…65535, and a path, query and fragment made
/// only of the characters RFC 3986 allows there (percent escapes included).
///
/// Anything else — user info, IP literals, international or percent-encoded hosts, characters a
/// parser would encode, a bad port — is not recognised, and the caller falls back to
/// Foundation's parser, which gives the same answer for every string this one recognises (a
/// seeded test compares them). Adding many tasks parses many URLs: this costs a few hundred
/// instructions a URL where `URL` and `URLComponents` cost about 14,000.
package struct PlainHTTPURL: Sendable, Equatable {
    /// `http` or `https`.
    package var scheme: String
    /// The host, lower-cased.
    package var host: String
    /// The port given, or the scheme's default port.
    package var port: Int
    /// The path as written (percent escapes kept), without the query and fragment; `/` when
    /// empty.
    package var path: String
    /// The string with the scheme and host lower-cased, a default port dropped and an empty
    /// path made `/`.
    package var normalizedKey: String

    /// Recognises `string`, or returns nil when it is not of the plain shape.
    package init?(_ string: String) {
        var copy = string
        let parsed = copy.withUTF8 { Self.scan($0, string) }
        guard let parsed else { return nil }
        self = parsed
    }

    private init(scheme: String, host: String, port: Int, path: String, normalizedKey: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        self.normalizedKey = normalizedKey
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, _ string: String) -> PlainHTTPURL? {
        let count = bytes.count
        var index = 0
        // Scheme.
        while index < count, bytes[index] != UInt8(ascii: ":") { index += 1 }
        let schemeEnd = index
        let secure: Bool
        switch schemeEnd {
        case 4: secure = false
        case 5: secure = true
        default: return nil
        }
        let expected: [UInt8] = [0x68, 0x74, 0x74, 0x70, 0x73]  // "https"
        for offset in 0..<schemeEnd where bytes[offset] | 0x20 != expected[offset] { return nil }
        guard count >= schemeEnd + 3, bytes[schemeEnd + 1] == UInt8(ascii: "/"),
            bytes[schemeEnd + 2] == UInt8(ascii: "/")
        else { return nil }
        // Host.
        index = schemeEnd + 3
        let hostStart = index
        var hasUpper = false
        var window: UInt32 = 0
        let punycode: UInt32 = 0x786E_2D2D  // "xn--"
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?")
                || byte == UInt8(ascii: "#")
            {
                break
            }
            let folded = byte | 0x20
            if folded >= UInt8(ascii: "a") && folded <= UInt8(ascii: "z") {
                if byte != folded { hasUpper = true }
            } else if !(byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) && byte != UInt8(ascii: ".")
                && byte != UInt8(ascii: "-")
            {
                return nil
            }
            window = window << 8 | UInt32(folded)
            if window == punycode { return nil }
            index += 1
        }
        let hostEnd = index
        guard hostEnd > hostStart else { return nil }
        // Port.
        let defaultPort = secure ? 443 : 80
        var port = defaultPort
        var portEnd = hostEnd
        if index < count, bytes[index] == UInt8(ascii: ":") {
            index += 1
            var value = 0
            var digits = 0
            while index < count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                digits += 1
                index += 1
                guard digits <= 5 else { return nil }
            }
            guard digits > 0, (1...65535).contains(value) else { return nil }
            port = value
            portEnd = index
        }
        // Path, query and fragment.
        let restStart = index
        var pathEnd = count
        var inFragment = false
        while index < count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "%"):
                guard index + 2 < count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else {
                    return nil
                }
                index += 2
            case UInt8(ascii: "?"):
                if pathEnd == count, !inFragment { pathEnd = index }
            case UInt8(ascii: "#"):
                guard !inFragment else { return nil }
                inFragment = true
                if pathEnd == count { pathEnd = index }
            default:
                guard isPathCharacter(byte) else { return nil }
            }
            index += 1
        }
        guard
            restStart == count || bytes[restStart] == UInt8(ascii: "/") || bytes[restStart] == UInt8(ascii: "?")
                || bytes[restStart] == UInt8(ascii: "#")
        else { return nil }

        func text(_ start: Int, _ end: Int) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
        let host = hasUpper ? text(hostStart, hostEnd).lowercased() : text(hostStart, hostEnd)
        let path = pathEnd > restStart ? text(restStart, pathEnd) : "/"
        let schemeIsLower = bytes[0..<schemeEnd].allSatisfy { $0 >= UInt8(ascii: "a") }
        let dropsPort = portEnd > hostEnd && port == defaultPort
        let addsSlash = restStart == count || bytes[restStart] != UInt8(ascii: "/")
        let key: String
        if schemeIsLower, !hasUpper, !dropsPort, !addsSlash {
            key = string
        } else {
            var built = secure ? "https://" : "http://"
            built.reserveCapacity(count + 1)
            built += host
            if !dropsPort { built += text(hostEnd, portEnd) }
            if addsSlash { built += "/" }
            built += text(restStart, count)
            key = built
        }
        return PlainHTTPURL(
            scheme: secure ? "https" : "http", host: host, port: port, path: path, normalizedKey: key)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }

    /// Unreserved, sub-delimiters, `:`, `@` and `/` (RFC 3986's `pchar` and the path's slash;
    /// `?` and `#` are handled by the caller).
    private static func isPathCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"),
            UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
            UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }
}
