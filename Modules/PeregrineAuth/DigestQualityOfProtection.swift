/// A Digest `qop` value (RFC 7616 §3.3).
public enum DigestQualityOfProtection: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Authentication of the request line only.
    case auth
    /// Authentication with integrity of the request body; the body of a GET or HEAD is empty.
    case authInt = "auth-int"

    public var description: String { rawValue }
}
