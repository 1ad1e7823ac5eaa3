/// A point on a ``MockTransport``'s virtual clock: the time elapsed since the transport was made.
public struct MockInstant: InstantProtocol, CustomStringConvertible {
    /// Virtual time since the transport was created.
    public var offset: Duration

    /// Creates an instant `offset` after the clock's origin.
    public init(offset: Duration) { self.offset = offset }

    /// The clock's origin, when a transport is created.
    public static let zero = MockInstant(offset: .zero)

    public func advanced(by duration: Duration) -> MockInstant { MockInstant(offset: offset + duration) }

    public func duration(to other: MockInstant) -> Duration { other.offset - offset }

    public static func < (lhs: MockInstant, rhs: MockInstant) -> Bool { lhs.offset < rhs.offset }

    public var description: String { "t+\(offset)" }
}
