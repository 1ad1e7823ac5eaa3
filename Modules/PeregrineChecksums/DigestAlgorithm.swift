/// A digest algorithm that OpenSSL's EVP interface computes.
public enum DigestAlgorithm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case md5
    case sha1
    case sha224
    case sha256
    case sha384
    case sha512
    case sha512_256 = "sha512-256"
    case sha3_256 = "sha3-256"
    case sha3_512 = "sha3-512"
    case blake2b512

    /// The name OpenSSL's `EVP_get_digestbyname` knows it by.
    package var openSSLName: String {
        switch self {
        case .md5: "MD5"
        case .sha1: "SHA1"
        case .sha224: "SHA224"
        case .sha256: "SHA256"
        case .sha384: "SHA384"
        case .sha512: "SHA512"
        case .sha512_256: "SHA512-256"
        case .sha3_256: "SHA3-256"
        case .sha3_512: "SHA3-512"
        case .blake2b512: "BLAKE2B512"
        }
    }

    /// The digest's length in bytes.
    public var byteCount: Int {
        switch self {
        case .md5: 16
        case .sha1: 20
        case .sha224: 28
        case .sha256, .sha512_256, .sha3_256: 32
        case .sha384: 48
        case .sha512, .sha3_512, .blake2b512: 64
        }
    }

    public var description: String { rawValue }
}
