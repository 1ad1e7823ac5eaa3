/// Decodes JSON-RPC 2.0 request bodies (single or batch) and encodes responses and
/// notifications, as aria2 does: a body that is no JSON answers `-32700` with a null id, a
/// JSON value that is no request (also one without an `id`) answers `-32600`, an empty batch
/// answers `[]`.
///
/// Pure functions; nothing here can crash on input (the decoder is fuzzed).
public enum RPCCodec {
    /// One entry of a request body: a call, or why it is not one (answered with its id).
    public enum Entry: Sendable, Hashable {
        case call(RPCCall)
        case invalid(id: JSONValue, RPCError)
    }

    /// A decoded request body.
    public enum Body: Sendable, Hashable {
        /// One request: answer with one response.
        case single(Entry)
        /// A batch: answer with an array of responses, in order.
        case batch([Entry])
        /// The body as a whole is refused (not JSON, too many calls): answer with this error.
        case failure(RPCError)
    }

    /// Decodes a request body.
    public static func decode(_ bytes: some Collection<UInt8>, limits: RPCLimits = RPCLimits()) -> Body {
        guard bytes.count <= limits.maxRequestBytes else {
            return .failure(
                RPCError(code: -32600, "Invalid Request. The request exceeds \(limits.maxRequestBytes) bytes."))
        }
        guard let value = try? JSONValue.parse(bytes) else { return .failure(.parseError) }
        if case .array(let items) = value {
            guard items.count <= limits.maxBatchCount else {
                return .failure(
                    RPCError(code: -32600, "Invalid Request. A batch holds at most \(limits.maxBatchCount) calls."))
            }
            return .batch(items.map(entry))
        }
        return .single(entry(value))
    }

    /// Reads one request object.
    static func entry(_ value: JSONValue) -> Entry {
        guard case .object(let members) = value else { return .invalid(id: .null, .invalidRequest) }
        // A call without an id (a JSON-RPC notification) is refused and runs nothing, as aria2
        // refuses it: it would be answered by nobody. An explicit null id is a call.
        guard let id = members["id"] else { return .invalid(id: .null, .invalidRequest) }
        switch id {
        case .null, .string, .integer, .double: break
        default: return .invalid(id: .null, .invalidRequest)
        }
        guard case .string(let method) = members["method"] else { return .invalid(id: id, .invalidRequest) }
        let params: [JSONValue]
        switch members["params"] {
        case nil, .null: params = []
        case .array(let items): params = items
        default: return .invalid(id: id, .invalidRequest)
        }
        return .call(RPCCall(id: id, method: method, params: params))
    }

    /// A response object: the result, or the error.
    public static func response(id: JSONValue, _ outcome: Result<JSONValue, RPCError>) -> JSONValue {
        switch outcome {
        case .success(let result): .object(["id": id, "jsonrpc": "2.0", "result": result])
        case .failure(let error): .object(["id": id, "jsonrpc": "2.0", "error": error.json])
        }
    }

    /// A notification aria2 sends over WebSocket: `{"jsonrpc":"2.0","method":…,"params":[{"gid":…}]}`.
    public static func notification(_ method: String, gid: GID) -> JSONValue {
        .object(["jsonrpc": "2.0", "method": .string(method), "params": [["gid": .string(gid.description)]]])
    }
}
