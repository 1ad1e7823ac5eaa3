import PeregrineVerification

/// A Digest `algorithm` of RFC 7616 §3.3: the hash, and whether it is a `-sess` variant.
///
/// The hashes are computed by PeregrineVerification's `StreamingHasher` (OpenSSL EVP).
public enum DigestHashAlgorithm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case md5 = "MD5"
    case md5Session = "MD5-sess"
    case sha256 = "SHA-256"
    case sha256Session = "SHA-256-sess"
    case sha512_256 = "SHA-512-256"
    case sha512_256Session = "SHA-512-256-sess"

    /// The algorithm named by a challenge's `algorithm` value (case-insensitive), or nil when
    /// this client does not implement it.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue.caseInsensitiveEquals(name) }) else {
            return nil
        }
        self = match
    }

    /// Whether A1 includes the nonce and cnonce (`-sess`).
    public var isSession: Bool {
        switch self {
        case .md5Session, .sha256Session, .sha512_256Session: true
        case .md5, .sha256, .sha512_256: false
        }
    }

    /// The hash function.
    public var hash: DigestAlgorithm {
        switch self {
        case .md5, .md5Session: .md5
        case .sha256, .sha256Session: .sha256
        case .sha512_256, .sha512_256Session: .sha512_256
        }
    }

    /// How strong the hash is, for choosing among several Digest challenges: higher is stronger.
    /// A `-sess` variant ranks with its hash.
    public var strength: Int {
        switch hash {
        case .sha512_256: 3
        case .sha256: 2
        default: 1
        }
    }

    /// The lower-case hexadecimal hash of `text`'s UTF-8 bytes.
    ///
    /// - Throws: `VerificationError` when OpenSSL does not offer the hash (MD5 in FIPS mode).
    public func hex(_ text: String) throws(VerificationError) -> String {
        try StreamingHasher.digest(hash, of: text.utf8).hexString
    }

    /// Whether this process's OpenSSL computes the hash.
    public var isAvailable: Bool {
        (try? StreamingHasher(hash)) != nil
    }

    public var description: String { rawValue }
}
