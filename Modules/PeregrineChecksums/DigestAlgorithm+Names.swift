extension DigestAlgorithm {
    /// Reads an algorithm name the way people and tools write it.
    ///
    /// Case, `-`, `_`, `/` and spaces are ignored, so `sha256`, `SHA256`, `sha-256`, `SHA-256`
    /// and OpenSSL's `SHA2-256` all name ``sha256``. Also understood: `sha` (RFC 3230's name for
    /// SHA-1), `sha-512/256`, `sha3-256`, `SHA3_512`, `blake2b512`, `BLAKE2b-512` and `BLAKE2b`
    /// (the name `b2sum --tag` writes, whose default length is 512 bits).
    ///
    /// - Returns: nil for a name that is not one of the supported algorithms (`crc32c`,
    ///   `blake2b-256`, `sha3-384`, …).
    public init?(name: some StringProtocol) {
        var key = ""
        for character in name.lowercased() where !"-_/ ".contains(character) { key.append(character) }
        switch key {
        case "md5": self = .md5
        case "sha1", "sha": self = .sha1
        case "sha224", "sha2224": self = .sha224
        case "sha256", "sha2256": self = .sha256
        case "sha384", "sha2384": self = .sha384
        case "sha512", "sha2512": self = .sha512
        case "sha512256", "sha2512256": self = .sha512_256
        case "sha3256": self = .sha3_256
        case "sha3512": self = .sha3_512
        case "blake2b512", "blake2b": self = .blake2b512
        default: return nil
        }
    }

    /// The names of every supported algorithm, for messages: "md5, sha1, sha224, …".
    static var supportedNames: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
