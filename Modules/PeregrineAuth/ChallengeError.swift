import PeregrineCore

/// Why a `WWW-Authenticate` or `Proxy-Authenticate` value, or one challenge in it, was refused.
///
/// A struct with static codes so that the set can grow. The message is bounded and quotes the
/// server's text only as a short excerpt with control characters escaped, so a hostile header
/// never floods a log.
public struct ChallengeError: PeregrineError {
    /// A kind of problem.
    public struct Code: PeregrineErrorCode {
        /// A stable short name.
        public let name: String
        init(_ name: String) { self.name = name }

        /// The field value is empty or only separators.
        public static let empty = Code("empty challenge")
        /// The field value is longer than the parser's limit.
        public static let tooLong = Code("challenge too long")
        /// A byte that the grammar does not allow where it stands (a control character, a
        /// non-ASCII byte outside a quoted string, a missing separator).
        public static let invalidCharacter = Code("invalid character")
        /// A quoted string without its closing quote.
        public static let unterminatedQuotedString = Code("unterminated quoted string")
        /// A parameter name without `=` and a value.
        public static let missingParameterValue = Code("parameter without a value")
        /// The same parameter twice in one challenge (RFC 9110 §11.2 allows each once).
        public static let duplicateParameter = Code("duplicate parameter")
        /// More challenges than the parser's limit.
        public static let tooManyChallenges = Code("too many challenges")
        /// More parameters in one challenge than the parser's limit.
        public static let tooManyParameters = Code("too many parameters")
        /// More header fields than the parser's limit.
        public static let tooManyFields = Code("too many header fields")
        /// A challenge without the `realm` its scheme requires.
        public static let missingRealm = Code("missing realm")
        /// A Digest challenge without a `nonce`.
        public static let missingNonce = Code("missing nonce")
        /// A Digest `algorithm` this client does not implement.
        public static let unsupportedAlgorithm = Code("unsupported algorithm")
        /// A Digest `qop` list without `auth` or `auth-int`.
        public static let unsupportedQualityOfProtection = Code("unsupported qop")
        /// A scheme other than the one the caller expected.
        public static let unexpectedScheme = Code("unexpected scheme")
    }

    /// What is wrong.
    public var code: Code
    /// The byte offset in the field value where the problem was found, when it has one.
    public var offset: Int?
    /// What happened, for people; at most about 200 characters.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String, offset: Int? = nil) {
        self.code = code
        self.offset = offset
        self.message = message.count > 200 ? String(message.prefix(200)) + "…" : message
    }

    public var description: String {
        "\(code): \(message)" + (offset.map { " (at byte \($0))" } ?? "")
    }
}
