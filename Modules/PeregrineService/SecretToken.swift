/// The RPC secret (`--rpc-secret`), compared in constant time. Its description never shows it.
public struct SecretToken: Sendable, CustomStringConvertible {
    private let bytes: [UInt8]

    /// Wraps a secret.
    public init(_ secret: String) { bytes = Array(secret.utf8) }

    /// Whether `candidate` is the secret, in time that depends only on the lengths.
    public func matches(_ candidate: String) -> Bool {
        let given = Array(candidate.utf8)
        var difference = UInt8(truncatingIfNeeded: given.count ^ bytes.count)
        // Always walk the whole candidate, so the time does not tell where it differs.
        for index in given.indices {
            difference |= given[index] ^ (bytes.isEmpty ? 0 : bytes[index % bytes.count])
        }
        return difference == 0 && given.count == bytes.count
    }

    public var description: String { "SecretToken(redacted)" }
}
