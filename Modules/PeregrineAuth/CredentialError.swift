import PeregrineCore

/// Why a credential cannot be sent with a scheme.
public struct CredentialError: PeregrineError {
    /// A kind of problem.
    public struct Code: PeregrineErrorCode {
        /// A stable short name.
        public let name: String
        init(_ name: String) { self.name = name }

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
}
