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
    public var normalizedUser: String { Self.nfc(user) }

    /// The password in normalisation form C.
    public var normalizedPassword: String { Self.nfc(password) }

    /// `text` in normalisation form C, from the standard library's own normaliser (the one
    /// string comparison uses), so that this module needs no Foundation: loading Foundation and
    /// ICU would cost every program that links the Auth module about 7 MiB of memory.
    static func nfc(_ text: String) -> String {
        String(decoding: text._nfcCodeUnits, as: UTF8.self)
    }

    public var description: String { "Credential(user: \"\(AuthenticationText.excerpt(user))\", password: ***)" }
}
