/// The shape of Peregrine's errors: a ``code`` from an open set and a ``message`` that says what
/// happened and, where it helps, what to do (as swift-nio's `FileSystemError`).
///
/// Each error type declares its `Code` as a struct with static members, so the set can grow
/// without breaking a caller's `switch`; compare codes with `==`. The description is
/// `"code: message"` unless the error says more (an HTTP status, a path, a line).
public protocol PeregrineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of the error's codes.
    associatedtype Code: PeregrineErrorCode
    /// What kind of failure this is.
    var code: Code { get }
    /// What happened, and what to do.
    var message: String { get }
}

extension PeregrineError {
    public var description: String { "\(code): \(message)" }
}

/// A kind of failure: a name that reads well in a message (`"download directory unavailable"`).
public protocol PeregrineErrorCode: Sendable, Hashable, CustomStringConvertible {
    /// The code's name, as messages print it.
    var name: String { get }
}

extension PeregrineErrorCode {
    public var description: String { name }
}
