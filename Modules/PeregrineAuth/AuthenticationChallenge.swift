/// One challenge of a `WWW-Authenticate` or `Proxy-Authenticate` field (RFC 9110 §11.3): an
/// authentication scheme with either a token68 or a list of parameters.
///
/// Scheme and parameter names compare case-insensitively, as RFC 9110 requires; values are
/// kept as sent (quoted strings unescaped). ``AuthenticationChallengeParser`` makes these from
/// header values; ``headerValue`` writes one back, so a test can script a server's challenge.
public struct AuthenticationChallenge: Sendable, Hashable, CustomStringConvertible {
    /// One `name=value` parameter.
    public struct Parameter: Sendable, Hashable {
        /// The name as sent.
        public var name: String
        /// The value, unescaped when it was a quoted string.
        public var value: String
        /// Whether the value was (or is to be written as) a quoted string.
        public var isQuoted: Bool

        /// Creates a parameter.
        public init(name: String, value: String, isQuoted: Bool = true) {
            self.name = name
            self.value = value
            self.isQuoted = isQuoted
        }
    }

    /// The scheme as sent, e.g. `Digest`.
    public var scheme: String
    /// The parameters in order; empty when the challenge carries a token68 or nothing.
    public var parameters: [Parameter]
    /// The token68 form (`Newauth abc==`), when the challenge uses it.
    public var token68: String?

    /// Creates a challenge.
    public init(scheme: String, parameters: [Parameter] = [], token68: String? = nil) {
        self.scheme = scheme
        self.parameters = parameters
        self.token68 = token68
    }

    /// Whether the scheme is `name`, ignoring case.
    public func hasScheme(_ name: String) -> Bool {
        scheme.caseInsensitiveEquals(name)
    }

    /// The value of the named parameter (ignoring case), if present.
    public subscript(parameter name: String) -> String? {
        parameters.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// The `realm` parameter, if present.
    public var realm: String? { self[parameter: "realm"] }

    /// The challenge as a field value: the scheme, then the token68 or the parameters, with
    /// quoted strings escaped.
    public var headerValue: String {
        if let token68 { return "\(scheme) \(token68)" }
        guard !parameters.isEmpty else { return scheme }
        let rendered = parameters.map { parameter in
            let bare = !parameter.isQuoted && AuthenticationText.isToken(parameter.value)
            return "\(parameter.name)=" + (bare ? parameter.value : AuthenticationText.quoted(parameter.value))
        }
        return "\(scheme) " + rendered.joined(separator: ", ")
    }

    public var description: String { AuthenticationText.excerpt(headerValue, limit: 200) }
}
