/// Why a credential cannot be sent with a scheme.
public struct CredentialError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A kind of problem.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// A stable short name.
        public let name: String
        init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A Basic user name with a colon.
        public static let colonInUser = Code("colon in the user name")
        /// A control character in the user name or password.
        public static let controlCharacter = Code("control character")
    }

    /// What is wrong.
    public var code: Code
    /// What happened; never contains the password.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
