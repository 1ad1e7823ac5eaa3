/// An HTTP authentication scheme this module answers.
///
/// ``AuthenticatingTransport/Configuration/allowedSchemes`` restricts the retrier to some of
/// them (the CLI's `--auth basic|digest|any`); among the challenges of one response it picks
/// the strongest allowed: Digest SHA-512-256, then SHA-256, then MD5, then Basic.
public enum AuthenticationScheme: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// RFC 7617: user and password in base64, readable by anyone on the path without TLS.
    case basic = "Basic"
    /// RFC 7616: a hash of the password bound to the server's nonce.
    case digest = "Digest"

    /// Parses `basic`, `digest` or `any` (case-insensitive), as a command line takes them.
    ///
    /// - Returns: the schemes named, or nil for anything else.
    public static func schemes(named name: String) -> Set<AuthenticationScheme>? {
        switch name.lowercased() {
        case "basic": [.basic]
        case "digest": [.digest]
        case "any": Set(allCases)
        default: nil
        }
    }

    public var description: String { rawValue }
}
