/// A JSON object: its members in the order they were read or built, each name once.
///
/// Answers are built member by member and written in that order, so building and writing one
/// hashes no name and sorts nothing — a `tellWaiting(0, 100)` answer is a hundred status objects
/// of a dozen members, and hashing and sorting their names was about a quarter of its
/// instructions. A name is found by a scan while the object is small, and through an index of its
/// names once it has more than ``indexedCount`` members, so that an object of a hostile request
/// with thousands of members costs no quadratic time to read.
///
/// Two objects are equal when they have the same members, in whatever order, as dictionaries
/// are; so is their hash.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    fileprivate struct Member: Sendable {
        var key: String
        var value: JSONValue
    }

    /// The members in order, as `(key, value)` pairs.
    public struct Iterator: IteratorProtocol {
        fileprivate var base: IndexingIterator<[Member]>

        public mutating func next() -> Element? {
            guard let member = base.next() else { return nil }
            return (member.key, member.value)
        }
    }

    private var members: [Member] = []
    /// The position of each name, kept once the object has more than `indexedCount` members.
    private var positions: [String: Int]?

    /// Past this many members, names are looked up through an index rather than by a scan.
    public static let indexedCount = 16

    /// An empty object.
    public init() {}

    /// An empty object with room for `capacity` members.
    public init(minimumCapacity capacity: Int) { members.reserveCapacity(capacity) }

    /// The members in the order written. As in a dictionary literal, a name may appear once
    /// (checked in debug builds): the members are appended without looking the names up, which
    /// was most of the cost of building a status object.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(literal: elements)
    }

    init(literal elements: [(String, JSONValue)]) {
        members.reserveCapacity(elements.count)
        for (key, value) in elements {
            assert(position(of: key) == nil, "a JSON object literal repeats the name \(key)")
            append(key, value)
        }
    }

    /// The members in the order given; a repeated name keeps its last value, in its first place.
    public init(_ elements: some Sequence<(String, JSONValue)>) {
        members.reserveCapacity(elements.underestimatedCount)
        for (key, value) in elements { self[key] = value }
    }

    /// A dictionary's members, ordered by name (a dictionary has no order of its own, and an
    /// answer should not change from one process to the next).
    public init(_ dictionary: [String: JSONValue]) {
        members.reserveCapacity(dictionary.count)
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) { append(key, value) }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    /// The names, in order.
    public var keys: [String] { members.map(\.key) }

    /// The value of a member; setting a new name appends it, setting `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let position = position(of: key) {
                if let newValue {
                    members[position].value = newValue
                } else {
                    members.remove(at: position)
                    reindex()
                }
            } else if let newValue {
                append(key, newValue)
            }
        }
    }

    /// Adds a member unless the name is there already (then the object is unchanged and the
    /// answer is `false`): a parsed object keeps a repeated name's first value.
    @discardableResult
    mutating func addIfAbsent(_ key: String, _ value: JSONValue) -> Bool {
        guard position(of: key) == nil else { return false }
        append(key, value)
        return true
    }

    /// The members `isIncluded` keeps, in order.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        var kept = JSONObject()
        for member in members where try isIncluded((member.key, member.value)) { kept.append(member.key, member.value) }
        return kept
    }

    public func makeIterator() -> Iterator { Iterator(base: members.makeIterator()) }

    public var underestimatedCount: Int { members.count }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        // Names are unique on either side: the same count and every member of one found in the
        // other is the same set of members.
        guard lhs.members.count == rhs.members.count else { return false }
        for member in lhs.members where rhs[member.key] != member.value { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: a sum of each member's own hash.
        var sum = 0
        for member in members {
            var own = Hasher()
            own.combine(member.key)
            own.combine(member.value)
            sum &+= own.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(sum)
    }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return members.firstIndex { $0.key == key }
    }

    /// Appends a member whose name is not in the object.
    private mutating func append(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
        if positions != nil {
            positions?[key] = members.count - 1
        } else if members.count > Self.indexedCount {
            reindex()
        }
    }

    private mutating func reindex() {
        guard members.count > Self.indexedCount else {
            positions = nil
            return
        }
        var positions = [String: Int](minimumCapacity: members.count)
        for (position, member) in members.enumerated() { positions[member.key] = position }
        self.positions = positions
    }

    /// Calls `body` with each member, in order, without making tuples of them.
    func forEachMember(_ body: (String, JSONValue) -> Void) {
        for member in members { body(member.key, member.value) }
    }
}
