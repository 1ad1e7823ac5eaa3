/// A bandwidth cap in bytes per second, checked when it is made.
///
/// `nil` in an optional `SpeedLimit` means "unlimited" everywhere in Peregrine, so a value of
/// this type is always a real cap: at least 1 byte/s and at most ``maximum``.
public struct SpeedLimit: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The cap.
    public let bytesPerSecond: Int64

    /// The largest cap accepted, 1 PiB/s: anything above is a mistake, not a limit.
    public static let maximum: Int64 = 1 << 50

    /// Creates a cap.
    ///
    /// - Throws: ``SpeedLimitError/Code/notPositive`` for 0 or less (say "unlimited" with nil),
    ///   ``SpeedLimitError/Code/tooLarge`` above ``maximum``.
    public init(bytesPerSecond: Int64) throws(SpeedLimitError) {
        guard bytesPerSecond > 0 else {
            throw SpeedLimitError(
                .notPositive, "a speed limit of \(bytesPerSecond) bytes/s is not positive; use no limit instead")
        }
        guard bytesPerSecond <= Self.maximum else {
            throw SpeedLimitError(
                .tooLarge, "a speed limit of \(bytesPerSecond) bytes/s is above the largest, \(Self.maximum)")
        }
        self.bytesPerSecond = bytesPerSecond
    }

    /// Reads a rate as curl's `--limit-rate` and wget's `--limit-rate` take it: a number of bytes
    /// per second, optionally with a fraction, and an optional suffix `K`, `M` or `G` (either
    /// case, powers of 1024): `500K`, `2M`, `1.5m`, `1048576`. `0` (any spelling of zero) means
    /// unlimited and returns nil.
    ///
    /// aria2's options (`max-download-limit`, `max-overall-download-limit`) are a subset: whole
    /// numbers with `K` or `M`.
    ///
    /// - Throws: ``SpeedLimitError/Code/malformed`` for anything else, ``SpeedLimitError/Code/tooLarge``
    ///   above ``maximum``, ``SpeedLimitError/Code/notPositive`` for a positive rate below 1 byte/s.
    public static func parse(_ text: String) throws(SpeedLimitError) -> SpeedLimit? {
        var number = Substring(text)
        var factor: Double = 1
        if let last = number.last, let power = "kmg".firstIndex(of: Character(last.lowercased())) {
            factor = Double(1 << (10 * ("kmg".distance(from: "kmg".startIndex, to: power) + 1)))
            number = number.dropLast()
        }
        let valid =
            !number.isEmpty && number.first != "." && number.last != "."
            && number.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") } && number.filter { $0 == "." }.count <= 1
        guard valid, let value = Double(number) else {
            throw SpeedLimitError(
                .malformed, "\"\(text.prefix(40))\" is not a rate: use bytes per second, with K, M or G (e.g. 500K, 2M)"
            )
        }
        if value == 0 { return nil }
        let bytes = value * factor
        // A fractional count of bytes is a missing unit ("0.5" meant 0.5M), never a rate to
        // crawl at (one that rounds to nothing is refused below as not positive).
        guard bytes.rounded() < 1 || factor > 1 || value == value.rounded() else {
            throw SpeedLimitError(
                .malformed,
                "\"\(text.prefix(40))\" is not a whole number of bytes per second: add K, M or G (e.g. \(text.prefix(20))M)"
            )
        }
        guard bytes <= Double(maximum) else {
            throw SpeedLimitError(
                .tooLarge, "\"\(text.prefix(40))\" is above the largest speed limit, \(maximum) bytes/s")
        }
        return try SpeedLimit(bytesPerSecond: Int64(bytes.rounded()))
    }

    /// The cap with a binary unit, e.g. `2 MiB/s` or `1500 B/s`.
    public var description: String {
        for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] where bytesPerSecond >= 1 << shift {
            let value = Double(bytesPerSecond) / Double(1 << shift)
            let text = value == value.rounded() ? String(Int64(value)) : String(format2(value))
            return "\(text) \(unit)/s"
        }
        return "\(bytesPerSecond) B/s"
    }

    private func format2(_ value: Double) -> String {
        let hundredths = Int64((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    public static func < (lhs: SpeedLimit, rhs: SpeedLimit) -> Bool { lhs.bytesPerSecond < rhs.bytesPerSecond }

    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(Int64.self)
        do {
            try self.init(bytesPerSecond: value)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(bytesPerSecond)
    }
}
