import Foundation

/// A user name and password, as given up front to a ``CredentialStore`` or returned by a
/// ``ChallengeHandler``.
///
/// Both are sent (Basic) or hashed (Digest) as UTF-8 after Unicode normalisation form C, as
/// RFC 7617 §2.1 and RFC 7616 §4 require with `charset="UTF-8"`, so "é" typed as one code point
/// or as "e" plus a combining accent gives the same bytes. ``description`` never shows the
/// password.
public struct Credential: Sendable, Hashable, CustomStringConvertible {
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// Creates a credential.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The user name in normalisation form C.
    public var normalizedUser: String { user.precomposedStringWithCanonicalMapping }

    /// The password in normalisation form C.
    public var normalizedPassword: String { password.precomposedStringWithCanonicalMapping }

    public var description: String { "Credential(user: \"\(AuthenticationText.excerpt(user))\", password: ***)" }
}
