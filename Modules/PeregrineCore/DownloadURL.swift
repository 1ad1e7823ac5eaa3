#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A URL that Peregrine can download: `http` or `https`, with a host, checked before any I/O.
///
/// The string the user gave is kept as ``string`` (it is the task's key, as in the seeds);
/// ``normalizedKey`` lower-cases the scheme and host and drops a default port, so that
/// `HTTP://Example.com:80/a` and `http://example.com/a` are recognised as the same download.
public struct DownloadURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL exactly as the caller gave it.
    public let string: String
    /// The parsed URL, parsed again from ``string`` when asked: only resolving a redirect needs
    /// it, and a parsed URL kept with every task cost the service's heap about 270 bytes a task.
    public var url: URL {
        // `init` parsed this very string.
        URL(string: string)!
    }
    /// `http` or `https`, lower-cased.
    public let scheme: String
    /// The host, lower-cased, without brackets for IPv6 literals.
    public let host: String
    /// The port, or the scheme's default port.
    public let port: Int
    /// The string with the scheme and host lower-cased and a default port dropped.
    public var normalizedKey: String { normalizedOverride ?? string }
    /// ``normalizedKey`` when it is not ``string`` itself (most often it is: kept once).
    private let normalizedOverride: String?

    /// Parses and checks a URL string.
    ///
    /// - Throws: ``URLValidationError`` when the string is empty, not a URL, uses a scheme other
    ///   than http or https, has no host, an out-of-range port, or contains white space or
    ///   control characters.
    public init(_ string: String) throws(URLValidationError) {
        if let plain = PlainHTTPURL(string) {
            self.init(string, scheme: plain.scheme, host: plain.host, port: plain.port, key: plain.normalizedKey)
        } else {
            try self.init(parsingWithFoundation: string)
        }
    }

    private init(_ string: String, scheme: String, host: String, port: Int, key: String) {
        self.string = string
        self.scheme = scheme
        self.host = host
        self.port = port
        normalizedOverride = key == string ? nil : key
    }

    /// Parses with Foundation's parser: every URL ``PlainHTTPURL`` does not recognise (user
    /// info, IP literals, international hosts, characters to encode, errors).
    package init(parsingWithFoundation string: String) throws(URLValidationError) {
        guard !string.isEmpty else { throw URLValidationError(.empty, string) }
        // C0 controls, space, DEL and the C1 controls U+0080…U+009F.
        if string.unicodeScalars.contains(where: { $0.value <= 0x20 || (0x7F...0x9F).contains($0.value) }) {
            throw URLValidationError(.malformed, string, detail: "it contains white space or a control character")
        }
        // One parse: the components reuse the URL's parse information.
        guard let url = URL(string: string), let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else {
            throw URLValidationError(.malformed, string)
        }
        guard let rawScheme = components.scheme, !rawScheme.isEmpty else {
            throw URLValidationError(.missingScheme, string)
        }
        let scheme = rawScheme.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw URLValidationError(.unsupportedScheme, string, detail: "scheme \"\(rawScheme)\"")
        }
        guard var host = Self.host(of: components), !host.isEmpty else {
            throw URLValidationError(.missingHost, string)
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw URLValidationError(.missingHost, string) }
        let defaultPort = scheme == "https" ? 443 : 80
        // URLComponents reports an overflowing port as no port at all.
        if components.port == nil, let range = components.rangeOfPort, !string[range].isEmpty {
            throw URLValidationError(.invalidPort, string, detail: "port \(string[range])")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw URLValidationError(.invalidPort, string, detail: "port \(port)")
        }
        // The ranges are those of the string the URL holds, which differs from the one given
        // when parsing encoded it (a host with non-ASCII letters, say).
        let normalizedKey = Self.normalizedKey(
            of: url.relativeString, components, scheme: scheme, defaultPort: defaultPort)
        self.init(
            string, scheme: scheme, host: host.lowercased(), port: components.port ?? defaultPort, key: normalizedKey)
    }

    /// The components' host, decoded. Most hosts need no decoding (ASCII, no percent sign, no
    /// `xn--` anywhere): their encoded form is the host, without `URLComponents.host`'s IDNA pass.
    private static func host(of components: URLComponents) -> String? {
        if let encoded = components.encodedHost {
            // The last four bytes, lower-cased, to spot "xn--" in any case.
            var window: UInt32 = 0
            let punycode =
                UInt32(UInt8(ascii: "x")) << 24 | UInt32(UInt8(ascii: "n")) << 16
                | UInt32(UInt8(ascii: "-")) << 8 | UInt32(UInt8(ascii: "-"))
            let plain = encoded.utf8.allSatisfy { byte in
                guard byte < 0x80, byte != UInt8(ascii: "%") else { return false }
                let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                window = window << 8 | UInt32(folded)
                return window != punycode
            }
            if plain { return encoded }
        }
        return components.host
    }

    /// The string with the scheme and host lower-cased, a default port dropped and an empty path
    /// made `/`; everything else exactly as given. Built from the parsed ranges, without
    /// serializing the components again (adding many tasks parses many URLs).
    private static func normalizedKey(
        of string: String, _ components: URLComponents, scheme: String, defaultPort: Int
    ) -> String {
        guard let schemeRange = components.rangeOfScheme, let hostRange = components.rangeOfHost,
            schemeRange.upperBound <= hostRange.lowerBound, hostRange.upperBound <= string.endIndex,
            components.rangeOfPort.map({ $0.lowerBound >= hostRange.upperBound && $0.upperBound <= string.endIndex })
                ?? true
        else {
            return string
        }
        var key = scheme
        key += string[schemeRange.upperBound..<hostRange.lowerBound]
        key += string[hostRange].lowercased()
        var rest = string[hostRange.upperBound...]
        if let portRange = components.rangeOfPort {
            // `rest` starts with ":" and the port's digits.
            if components.port == defaultPort {
                rest = string[portRange.upperBound...]
            } else {
                key += string[hostRange.upperBound..<portRange.upperBound]
                rest = string[portRange.upperBound...]
            }
        }
        if rest.isEmpty || rest.first == "?" || rest.first == "#" { key += "/" }
        key += rest
        return key
    }

    /// Scheme, host and port: the origin that credentials are bound to.
    public var origin: Origin { Origin(scheme: scheme, host: host, port: port) }

    public var description: String { string }

    public static func == (lhs: DownloadURL, rhs: DownloadURL) -> Bool { lhs.string == rhs.string }
    public func hash(into hasher: inout Hasher) { hasher.combine(string) }
}

/// The scheme, host and port of a URL (RFC 6454): what "the same server" means for credentials.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// Lower-cased scheme.
    public var scheme: String
    /// Lower-cased host.
    public var host: String
    /// Port, with the scheme's default filled in.
    public var port: Int

    /// Creates an origin.
    public init(scheme: String, host: String, port: Int) {
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.port = port
    }

    public var description: String { "\(scheme)://\(host):\(port)" }
}

/// Why a URL string was refused before any I/O.
public struct URLValidationError: PeregrineError {
    /// The kind of problem. A struct with static members so that the set can grow.
    public struct Code: PeregrineErrorCode {
        public let name: String
        /// The string is empty.
        public static let empty = Code(name: "empty URL")
        /// The string does not parse as a URL.
        public static let malformed = Code(name: "malformed URL")
        /// The URL has no scheme.
        public static let missingScheme = Code(name: "URL without a scheme")
        /// The scheme is not http or https.
        public static let unsupportedScheme = Code(name: "unsupported URL scheme")
        /// The URL has no host, or an empty one.
        public static let missingHost = Code(name: "URL without a host")
        /// The port is outside 1…65535.
        public static let invalidPort = Code(name: "invalid port")
    }

    /// What is wrong.
    public let code: Code
    /// The string that was refused, cut to 200 characters.
    public let urlString: String
    /// A detail, when there is one.
    public let detail: String?

    /// Creates an error.
    public init(_ code: Code, _ urlString: String, detail: String? = nil) {
        self.code = code
        self.urlString = urlString.count > 200 ? String(urlString.prefix(200)) + "…" : urlString
        self.detail = detail
    }

    /// The refused URL string, and what is wrong with it.
    public var message: String { description }

    public var description: String {
        "\(code) \"\(urlString)\"" + (detail.map { ": \($0)" } ?? "")
            + (code == .unsupportedScheme ? " (only http and https are downloaded)" : "")
    }
}
