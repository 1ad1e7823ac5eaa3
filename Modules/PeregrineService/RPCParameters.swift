/// A call's positional parameters after the `token:` secret, read with aria2's errors.
struct RPCParameters: Sendable {
    let values: [JSONValue]

    var count: Int { values.count }

    subscript(index: Int) -> JSONValue? { index < values.count ? values[index] : nil }

    /// A required string.
    func string(_ index: Int) throws(RPCError) -> String {
        guard let value = self[index] else { throw RPCError.missing(at: index) }
        guard case .string(let string) = value else { throw RPCError.wrongType(at: index) }
        return string
    }

    /// A required integer.
    func integer(_ index: Int) throws(RPCError) -> Int {
        guard let value = self[index] else { throw RPCError.missing(at: index) }
        guard let number = value.integerValue, let int = Int(exactly: number) else {
            throw RPCError.wrongType(at: index)
        }
        return int
    }

    /// An optional array of strings (the `keys` filter, a URI list).
    func strings(_ index: Int) throws(RPCError) -> [String]? {
        guard let value = self[index] else { return nil }
        guard case .array(let items) = value else { throw RPCError.wrongType(at: index) }
        var strings: [String] = []
        for item in items {
            guard case .string(let string) = item else { throw RPCError.wrongType(at: index) }
            strings.append(string)
        }
        return strings
    }
}
