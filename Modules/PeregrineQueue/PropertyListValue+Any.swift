#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension PropertyListValue {
    /// Converts a Swift value to a property-list value: strings, every integer type (in
    /// `Int64`'s range), `Double` and `Float`, `Bool`, `Date`, `Data`, and arrays and
    /// `[String: Any]` dictionaries of these. Anything else is refused, as SDE's property-list
    /// serialization would have refused it at save time.
    ///
    /// - Throws: ``DownloadManagerError/Code/notPropertyList`` naming the offending value's type.
    public init(converting value: Any) throws(DownloadManagerError) {
        switch value {
        case let value as PropertyListValue: self = value
        case let value as String: self = .string(value)
        case let value as Bool: self = .boolean(value)
        case let value as Int: self = .integer(Int64(value))
        case let value as Int8: self = .integer(Int64(value))
        case let value as Int16: self = .integer(Int64(value))
        case let value as Int32: self = .integer(Int64(value))
        case let value as Int64: self = .integer(value)
        case let value as UInt8: self = .integer(Int64(value))
        case let value as UInt16: self = .integer(Int64(value))
        case let value as UInt32: self = .integer(Int64(value))
        case let value as UInt:
            guard let exact = Int64(exactly: value) else { throw Self.refuse(value, "is beyond Int64") }
            self = .integer(exact)
        case let value as UInt64:
            guard let exact = Int64(exactly: value) else { throw Self.refuse(value, "is beyond Int64") }
            self = .integer(exact)
        case let value as Double: self = .real(value)
        case let value as Float: self = .real(Double(value))
        case let value as Date: self = .date(value)
        case let value as Data: self = .data(value)
        case let value as [Any]:
            var array: [PropertyListValue] = []
            array.reserveCapacity(value.count)
            for element in value { array.append(try PropertyListValue(converting: element)) }
            self = .array(array)
        case let value as [String: Any]:
            var dictionary: [String: PropertyListValue] = [:]
            for (key, element) in value { dictionary[key] = try PropertyListValue(converting: element) }
            self = .dictionary(dictionary)
        default:
            throw Self.refuse(value, "is not a property-list type")
        }
    }

    private static func refuse(_ value: Any, _ why: String) -> DownloadManagerError {
        DownloadManagerError(
            .notPropertyList,
            "a value of type \(type(of: value)) \(why); use String, an integer, Double, Bool, Date, Data, "
                + "or arrays and [String: …] dictionaries of these")
    }

    /// The plain Swift value: `String`, `Int`, `Double`, `Bool`, `Date`, `Data`, `[Any]` or
    /// `[String: Any]`. Integers come back as `Int` (64 bits on every platform Peregrine runs
    /// on), which is what `as? Int` in code ported from SDE's property lists expects.
    public var anyValue: Any {
        switch self {
        case .string(let value): value
        case .integer(let value): Int(truncatingIfNeeded: value)
        case .real(let value): value
        case .boolean(let value): value
        case .date(let value): value
        case .data(let value): value
        case .array(let values): values.map(\.anyValue)
        case .dictionary(let values): values.mapValues(\.anyValue)
        }
    }
}
