import PeregrineCore

/// Why a ``ServerTrustMap`` was refused when it was made.
public struct TrustConfigurationError: PeregrineError {
    /// A kind of problem.
    public struct Code: PeregrineErrorCode {
        /// A stable short name.
        public let name: String
        init(_ name: String) { self.name = name }

        /// A pin that is not the base64 of a 32-byte SHA-256 digest, or pinning without a pin.
        public static let invalidPin = Code("invalid public-key pin")
        /// An empty CA bundle path.
        public static let invalidCABundle = Code("invalid CA bundle")
        /// A host key that is empty, contains a character a host name cannot, or a bare `*`.
        public static let invalidHost = Code("invalid host")
        /// `insecure` as the default for every host; it may only be given to named hosts.
        public static let insecureDefault = Code("insecure default")
    }

    /// What is wrong.
    public var code: Code
    /// What happened and what to do.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
