/// An ordered list of HTTP header fields with case-insensitive name lookup.
///
/// Names keep the case they were given; lookups ignore case as RFC 9110 requires. Repeated
/// fields are kept in order, so a response with two `WWW-Authenticate` lines keeps both.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The field name as it was given.
        public var name: String
        /// The field value, without surrounding white space.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields in the order they were added.
    public private(set) var fields: [Field]

    /// Creates an empty list.
    public init() { fields = [] }

    /// Creates a list from name-value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Creates a list from a dictionary literal, in the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field of this name by a single one (or removes them all when `value` is nil).
    public mutating func replaceOrAdd(name: String, value: String?) {
        remove(name: name)
        if let value { add(name: name, value: value) }
    }

    /// Removes every field of this name.
    public mutating func remove(name: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// The first value of the named field, if any.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// Every value of the named field, in order.
    public func values(for name: String) -> [String] {
        var values: [String] = []
        for field in fields where field.name.caseInsensitiveEquals(name) { values.append(field.value) }
        return values
    }

    /// Whether a field of this name is present.
    public func contains(name: String) -> Bool {
        fields.contains { $0.name.caseInsensitiveEquals(name) }
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}

extension String {
    /// ASCII case-insensitive equality, as header names and URL schemes need.
    @inlinable
    package func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var left = utf8.makeIterator()
        var right = other.utf8.makeIterator()
        while let a = left.next(), let b = right.next() {
            guard a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A) else { return false }
        }
        return true
    }
}
