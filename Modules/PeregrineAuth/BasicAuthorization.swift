#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `Authorization` value of the Basic scheme (RFC 7617): `Basic ` and the base64 of
/// `user:password` in UTF-8, after normalisation form C (§2.1, `charset="UTF-8"`).
public struct BasicAuthorization: Sendable, Hashable {
    /// The credential encoded.
    public let credential: Credential
    /// The complete header value, e.g. `Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==`.
    public let headerValue: String

    /// Encodes a credential.
    ///
    /// - Throws: ``CredentialError`` when the user name contains a colon (RFC 7617 §2 makes
    ///   such a name impossible to send) or either part contains a control character.
    public init(_ credential: Credential) throws(CredentialError) {
        let user = credential.normalizedUser
        let password = credential.normalizedPassword
        guard !user.contains(":") else {
            throw CredentialError(.colonInUser, "the user name contains a colon, which Basic cannot send")
        }
        for part in [user, password] where part.unicodeScalars.contains(where: Self.isControl) {
            throw CredentialError(.controlCharacter, "the user name or password contains a control character")
        }
        self.credential = credential
        headerValue = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
    }
}
