/// A JSON-RPC error object, with aria2's codes and messages: `-32700` for a parse error,
/// `-32600` for an invalid request, and `1` for everything a method refuses (aria2 answers
/// an unknown method, a bad secret, an unknown GID and a wrong parameter all with code 1).
///
/// A struct with static members, so that the set can grow.
public struct RPCError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The JSON-RPC error code.
    public var code: Int
    /// The message, as aria2 words it where aria2 has the same error.
    public var message: String

    /// Creates an error.
    public init(code: Int = 1, _ message: String) {
        self.code = code
        self.message = String(message.prefix(1000))
    }

    /// The request was not JSON.
    public static let parseError = RPCError(code: -32700, "Parse error.")
    /// The JSON was not a JSON-RPC request.
    public static let invalidRequest = RPCError(code: -32600, "Invalid Request.")
    /// The secret token was missing or wrong.
    public static let unauthorized = RPCError("Unauthorized")

    /// No method by that name.
    public static func noSuchMethod(_ name: String) -> RPCError { RPCError("No such method: \(name)") }
    /// A parameter has the wrong JSON type (`index` counts after the token).
    public static func wrongType(at index: Int) -> RPCError { RPCError("The parameter at \(index) has wrong type.") }
    /// A required parameter is missing.
    public static func missing(at index: Int) -> RPCError { RPCError("The parameter at \(index) is missing.") }
    /// Not a GID.
    public static func invalidGID(_ text: String) -> RPCError { RPCError("Invalid GID \(text)") }
    /// A well-formed GID that names no download.
    public static func gidNotFound(_ text: String) -> RPCError { RPCError("GID \(text) is not found") }
    /// An option value aria2 would refuse.
    public static func badOption(_ name: String, _ reason: String) -> RPCError {
        RPCError("We encountered a problem while processing the option '--\(name)': \(reason)")
    }

    /// The error object of a response.
    public var json: JSONValue { .object(["code": .integer(Int64(code)), "message": .string(message)]) }

    public var description: String { "\(code): \(message)" }
}
