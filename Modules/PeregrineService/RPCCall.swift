/// One JSON-RPC call, decoded: its id, method name and positional parameters.
public struct RPCCall: Sendable, Hashable {
    /// The request's `id` (`null` when absent).
    public var id: JSONValue
    /// The method name.
    public var method: String
    /// The positional parameters, the `token:` secret still first when it was given.
    public var params: [JSONValue]

    /// Creates a call.
    public init(id: JSONValue = .integer(1), method: String, params: [JSONValue] = []) {
        self.id = id
        self.method = method
        self.params = params
    }
}
