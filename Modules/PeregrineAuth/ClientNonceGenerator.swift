import PeregrineCore
import PeregrineVerification
import Synchronization

/// Makes Digest client nonces (`cnonce`). Injectable, so tests can pin the values of RFC 7616's
/// examples.
public struct ClientNonceGenerator: Sendable {
    private let make: @Sendable () -> String

    /// Creates a generator from a closure; it may be called from any thread.
    public init(_ make: @escaping @Sendable () -> String) {
        self.make = make
    }

    /// The next client nonce.
    public func next() -> String { make() }

    /// 16 bytes from the system's secure random source, as 32 lower-case hex digits.
    public static let random = ClientNonceGenerator {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return bytes.hexString
    }

    /// `values` in order, then random nonces once they run out.
    public static func sequence(_ values: [String]) -> ClientNonceGenerator {
        let remaining = Locked(values[...])
        return ClientNonceGenerator {
            remaining.withLock { $0.popFirst() } ?? random.next()
        }
    }
}
