/// Parses `WWW-Authenticate` and `Proxy-Authenticate` field values into challenges, following
/// RFC 9110 §11: several challenges in one value, several fields, auth-params with tokens or
/// quoted strings (escapes included), and token68.
///
/// Built for hostile input: it works on the UTF-8 bytes in one pass with bounded look-ahead,
/// so the work is linear in the length of the value, and every limit (``Limits``) turns into a
/// ``ChallengeError`` rather than a large result. It never traps.
///
/// ```swift
/// let challenges = try AuthenticationChallengeParser().parse(
///     #"Digest realm="files", nonce="abc", qop="auth", Basic realm="files""#)
/// ```
public struct AuthenticationChallengeParser: Sendable {
    /// Bounds on what one response may make the parser produce.
    public struct Limits: Sendable, Hashable {
        /// The longest field value accepted, in UTF-8 bytes.
        public var maximumFieldLength: Int
        /// The most challenges in one response, all fields together.
        public var maximumChallenges: Int
        /// The most parameters in one challenge.
        public var maximumParameters: Int
        /// The most fields read from one response.
        public var maximumFields: Int

        /// Creates limits; the defaults are far above what real servers send (16 KiB per field,
        /// 16 challenges, 32 parameters, 16 fields).
        public init(
            maximumFieldLength: Int = 16_384, maximumChallenges: Int = 16, maximumParameters: Int = 32,
            maximumFields: Int = 16
        ) {
            self.maximumFieldLength = max(1, maximumFieldLength)
            self.maximumChallenges = max(1, maximumChallenges)
            self.maximumParameters = max(1, maximumParameters)
            self.maximumFields = max(1, maximumFields)
        }
    }

    /// The challenges of several fields and the errors of the fields that could not be read.
    public struct Result: Sendable, Hashable {
        /// The challenges of every field that parsed, in order.
        public var challenges: [AuthenticationChallenge]
        /// One error per field that did not parse (or was beyond a limit), in order.
        public var errors: [ChallengeError]
    }

    /// The limits applied.
    public var limits: Limits

    /// Creates a parser.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Parses one field value.
    ///
    /// - Throws: ``ChallengeError`` for a value that breaks the grammar or a limit; no partial
    ///   result is returned, because after a syntax error the rest of the value cannot be
    ///   attributed to a challenge with certainty.
    public func parse(_ fieldValue: String) throws(ChallengeError) -> [AuthenticationChallenge] {
        try parse(fieldValue, alreadyParsed: 0)
    }

    /// Parses every field of a response (e.g. `head.headers.values(for: "WWW-Authenticate")`).
    ///
    /// A field that does not parse is skipped and reported in ``Result/errors``, so one broken
    /// field does not hide a good challenge in another. Fields beyond ``Limits/maximumFields``
    /// and challenges beyond ``Limits/maximumChallenges`` are reported, not parsed.
    public func parse(fields: [String]) -> Result {
        var result = Result(challenges: [], errors: [])
        for (index, field) in fields.enumerated() {
            guard index < limits.maximumFields else {
                result.errors.append(
                    ChallengeError(
                        .tooManyFields,
                        "\(fields.count) challenge fields; only the first \(limits.maximumFields) are read"))
                break
            }
            do {
                result.challenges += try parse(field, alreadyParsed: result.challenges.count)
            } catch {
                result.errors.append(error)
            }
        }
        return result
    }

    /// Parses a bare list of auth-params, such as an `Authentication-Info` value
    /// (RFC 9110 §11.6.3).
    ///
    /// - Throws: ``ChallengeError`` for a malformed list or a limit.
    public func parseParameters(_ fieldValue: String) throws(ChallengeError) -> [AuthenticationChallenge.Parameter] {
        guard fieldValue.utf8.count <= limits.maximumFieldLength else {
            throw ChallengeError(
                .tooLong, "\(fieldValue.utf8.count) bytes; the limit is \(limits.maximumFieldLength)")
        }
        var scanner = Scanner(bytes: Array(fieldValue.utf8), limits: limits)
        scanner.skipSeparators()
        guard !scanner.isAtEnd else { return [] }
        return try scanner.parameters(allowingNextChallenge: false)
    }

    private func parse(_ fieldValue: String, alreadyParsed: Int) throws(ChallengeError) -> [AuthenticationChallenge] {
        let length = fieldValue.utf8.count
        guard length <= limits.maximumFieldLength else {
            throw ChallengeError(.tooLong, "\(length) bytes; the limit is \(limits.maximumFieldLength)")
        }
        var scanner = Scanner(bytes: Array(fieldValue.utf8), limits: limits)
        var challenges: [AuthenticationChallenge] = []
        while true {
            scanner.skipSeparators()
            if scanner.isAtEnd { break }
            guard alreadyParsed + challenges.count < limits.maximumChallenges else {
                throw ChallengeError(
                    .tooManyChallenges, "more than \(limits.maximumChallenges) challenges", offset: scanner.position)
            }
            challenges.append(try scanner.challenge())
        }
        guard !challenges.isEmpty else { throw ChallengeError(.empty, "no challenge in the field value") }
        return challenges
    }
}

/// The byte-level scanner behind ``AuthenticationChallengeParser``.
private struct Scanner {
    let bytes: [UInt8]
    let limits: AuthenticationChallengeParser.Limits
    var position = 0

    init(bytes: [UInt8], limits: AuthenticationChallengeParser.Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    var isAtEnd: Bool { position >= bytes.count }

    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let comma = UInt8(ascii: ",")
    private static let equals = UInt8(ascii: "=")
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    private func isWhitespace(_ byte: UInt8) -> Bool { byte == Self.space || byte == Self.tab }

    private func byte(at index: Int) -> UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let byte = byte(at: position), isWhitespace(byte) { position += 1 }
    }

    /// Skips white space and empty list elements (`, ,`), which RFC 9110 §5.6.1 tells
    /// recipients to accept.
    mutating func skipSeparators() {
        while let byte = byte(at: position), isWhitespace(byte) || byte == Self.comma { position += 1 }
    }

    /// `challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`
    mutating func challenge() throws(ChallengeError) -> AuthenticationChallenge {
        let scheme = try token(what: "an authentication scheme")
        var challenge = AuthenticationChallenge(scheme: scheme)
        guard let next = byte(at: position), next != Self.comma else { return challenge }
        guard isWhitespace(next) else {
            throw invalid(at: position, "after the scheme \"\(AuthenticationText.excerpt(scheme, limit: 20))\"")
        }
        skipWhitespace()
        guard let first = byte(at: position), first != Self.comma else { return challenge }
        if first != Self.quote, let token68 = token68() {
            challenge.token68 = token68
            return challenge
        }
        challenge.parameters = try parameters(allowingNextChallenge: true)
        return challenge
    }

    /// `#auth-param`, up to the end of the value or (when allowed) up to the scheme of the next
    /// challenge, which is a token not followed by `=`.
    mutating func parameters(allowingNextChallenge: Bool) throws(ChallengeError) -> [AuthenticationChallenge.Parameter]
    {
        var parameters: [AuthenticationChallenge.Parameter] = []
        while true {
            let start = position
            let name = try token(what: "a parameter name")
            skipWhitespace()
            guard byte(at: position) == Self.equals else {
                throw ChallengeError(
                    .missingParameterValue,
                    "parameter \"\(AuthenticationText.excerpt(name, limit: 20))\" has no \"=\" and value",
                    offset: position)
            }
            position += 1
            skipWhitespace()
            let value: String
            let isQuoted: Bool
            if byte(at: position) == Self.quote {
                value = try quotedString()
                isQuoted = true
            } else {
                guard let byte = byte(at: position), AuthenticationText.isTokenCharacter(byte) else {
                    throw ChallengeError(
                        .missingParameterValue,
                        "parameter \"\(AuthenticationText.excerpt(name, limit: 20))\" has no value", offset: position)
                }
                value = try token(what: "a parameter value")
                isQuoted = false
            }
            if parameters.contains(where: { $0.name.caseInsensitiveEquals(name) }) {
                throw ChallengeError(
                    .duplicateParameter, "parameter \"\(AuthenticationText.excerpt(name, limit: 20))\" appears twice",
                    offset: start)
            }
            guard parameters.count < limits.maximumParameters else {
                throw ChallengeError(
                    .tooManyParameters, "more than \(limits.maximumParameters) parameters in one challenge",
                    offset: start)
            }
            parameters.append(AuthenticationChallenge.Parameter(name: name, value: value, isQuoted: isQuoted))

            skipWhitespace()
            guard let separator = byte(at: position) else { return parameters }
            guard separator == Self.comma else { throw invalid(at: position, "after a parameter") }
            let afterComma = position
            skipSeparators()
            if isAtEnd { return parameters }
            if !startsParameter() {
                guard allowingNextChallenge else { throw invalid(at: position, "in a parameter list") }
                position = afterComma
                return parameters
            }
        }
    }

    /// Whether a parameter (`token BWS "="`) starts at the current position, rather than the
    /// scheme of the next challenge.
    private func startsParameter() -> Bool {
        var index = position
        while let byte = byte(at: index), AuthenticationText.isTokenCharacter(byte) { index += 1 }
        guard index > position else { return false }
        while let byte = byte(at: index), isWhitespace(byte) { index += 1 }
        return byte(at: index) == Self.equals
    }

    /// `token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`, accepted only
    /// when it is all that follows the scheme (up to a comma or the end). Leaves the position
    /// unchanged and returns nil otherwise, so the text is read as parameters.
    private mutating func token68() -> String? {
        var index = position
        while let byte = byte(at: index), Self.isToken68Character(byte) { index += 1 }
        guard index > position else { return nil }
        while byte(at: index) == Self.equals { index += 1 }
        var end = index
        while let byte = byte(at: end), isWhitespace(byte) { end += 1 }
        guard end == bytes.count || bytes[end] == Self.comma else { return nil }
        let text = String(decoding: bytes[position..<index], as: UTF8.self)
        position = end
        return text
    }

    private static func isToken68Character(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    private mutating func token(what: String) throws(ChallengeError) -> String {
        let start = position
        while let byte = byte(at: position), AuthenticationText.isTokenCharacter(byte) { position += 1 }
        guard position > start else { throw invalid(at: position, "where \(what) was expected") }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// `quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE`; obs-text (bytes ≥ 0x80) is
    /// kept and decoded as UTF-8, or as ISO-8859-1 when it is not valid UTF-8.
    private mutating func quotedString() throws(ChallengeError) -> String {
        let start = position
        position += 1
        var value: [UInt8] = []
        while true {
            guard let byte = byte(at: position) else {
                throw ChallengeError(.unterminatedQuotedString, "a quoted string has no closing quote", offset: start)
            }
            position += 1
            if byte == Self.quote { break }
            var character = byte
            if byte == Self.backslash {
                guard let escaped = self.byte(at: position) else {
                    throw ChallengeError(
                        .unterminatedQuotedString, "a quoted string ends in a lone backslash", offset: start)
                }
                guard escaped == Self.tab || escaped >= 0x20 && escaped != 0x7F else {
                    throw invalid(at: position, "after a backslash in a quoted string")
                }
                position += 1
                character = escaped
            } else if !(byte == Self.tab || byte >= 0x20 && byte != 0x7F) {
                throw invalid(at: position - 1, "in a quoted string")
            }
            value.append(character)
        }
        return Self.decode(value)
    }

    private static func decode(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var text = ""
        text.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
        return text
    }

    private func invalid(at offset: Int, _ context: String) -> ChallengeError {
        let description: String
        if let byte = byte(at: offset) {
            description =
                byte >= 0x21 && byte < 0x7F
                ? "\"\(Character(Unicode.Scalar(byte)))\"" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
        } else {
            description = "the end of the value"
        }
        return ChallengeError(.invalidCharacter, "unexpected \(description) \(context)", offset: offset)
    }
}
