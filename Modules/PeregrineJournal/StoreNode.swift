import PeregrineCore
import PeregrineStorage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One value of a stored record, as a backend's serializer sees it: the property-list types
/// plus null. The record coding (``StoreRecordCoding``) maps changes to nodes; each
/// ``StoreFormat`` maps nodes to bytes, keeping every case distinct (an integer is never
/// read back as a real).
package enum StoreNode: Sendable, Hashable {
    case null
    case boolean(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case array([StoreNode])
    /// Keys in their written order; a key appears at most once.
    case dictionary([(String, StoreNode)])

    package static func == (lhs: StoreNode, rhs: StoreNode) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.boolean(let a), .boolean(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.real(let a), .real(let b)): a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): a == b
        case (.date(let a), .date(let b)):
            a == b || (a.timeIntervalSinceReferenceDate.isNaN && b.timeIntervalSinceReferenceDate.isNaN)
        case (.data(let a), .data(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .boolean(let value): hasher.combine(value)
        case .integer(let value): hasher.combine(value)
        // NaNs are equal whatever their payload bits, so they hash as one.
        case .real(let value): hasher.combine(value.isNaN ? .nan : value)
        case .string(let value): hasher.combine(value)
        case .date(let value):
            let seconds = value.timeIntervalSinceReferenceDate
            hasher.combine(seconds.isNaN ? .nan : seconds)
        case .data(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .dictionary(let pairs):
            hasher.combine(pairs.count)
            for (key, value) in pairs {
                hasher.combine(key)
                hasher.combine(value)
            }
        }
    }
}

/// A record a ``StoreFormat`` could not read.
package struct StoreFormatError: Error, Sendable {
    package var message: String
    package init(_ message: String) { self.message = message }
}

/// A serializer for one backend: record nodes to bytes and back.
///
/// Implementation requirements: `decode(encode(node)) == node` for every node, including
/// integers versus reals, dates with sub-second precision and data; `decode` never traps on
/// hostile input and bounds its recursion.
package protocol StoreFormat: Sendable {
    /// The backend's short name (`json`, `plist`), also the snapshot file's extension.
    var name: String { get }
    /// How records are framed in the snapshot and journal files.
    var framing: RecordFraming { get }
    /// Appends the bytes of one record.
    func encode(_ node: StoreNode, into bytes: inout [UInt8])
    /// Reads one record.
    func decode(_ bytes: UnsafeRawBufferPointer) throws(StoreFormatError) -> StoreNode
}
