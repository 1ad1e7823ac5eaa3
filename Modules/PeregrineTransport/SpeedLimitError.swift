import PeregrineCore

/// Why a rate is not a speed limit.
public struct SpeedLimitError: PeregrineError {
    /// A kind of bad rate.
    public struct Code: PeregrineErrorCode {
        /// A stable short name.
        public let name: String
        init(_ name: String) { self.name = name }

        /// Zero or negative: "unlimited" is no limit (nil), not a limit of 0.
        public static let notPositive = Code("rate not positive")
        /// Above ``SpeedLimit/maximum``.
        public static let tooLarge = Code("rate too large")
        /// Not a number with an optional K, M or G.
        public static let malformed = Code("malformed rate")
    }

    /// What kind of bad rate.
    public var code: Code
    /// What was wrong and what is accepted; at most 200 characters.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message.count > 200 ? String(message.prefix(200)) + "…" : message
    }
}
