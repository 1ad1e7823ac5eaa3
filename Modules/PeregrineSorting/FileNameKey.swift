/// A file name's sort key: numbers by value, case and accents ignored, plus its index letter.
///
/// The rule, with no locale collation (none is needed, or available without ICU):
/// - A run of ASCII digits compares as a number, whatever its leading zeros: `file2` < `file10`,
///   and `file01` ties `file1`.
/// - Letters compare case-insensitively (Unicode lower-case mapping).
/// - A Latin letter with a diacritic or a stroke compares as its base letter (`é`, `È`, `ø`,
///   `ł` as `e`, `e`, `o`, `l`); `ß` as `ss`, `æ` as `ae`, `œ` as `oe`, `ĳ` as `ij`, dotless `ı` as
///   `i`; combining marks are skipped, so a decomposed `é` equals a precomposed one.
/// - Everything else compares by Unicode scalar value, which keeps each script together:
///   punctuation and spaces before numbers, numbers before Latin letters, Latin before other
///   scripts.
///
/// Names that tie under this rule are told apart by the caller (``DownloadList`` uses the size,
/// then the exact name, then the URL).
///
/// The index letter (``indexTitle``) is the first character of the key when it is a Latin
/// letter `a`–`z` (so `Éclair` is under "E" and `ß` under "S"), and "#" otherwise: digits,
/// punctuation, an empty name and every non-Latin script.
///
/// Comparison costs O(1) for most pairs (the first six key units are packed in two integers)
/// and O(length) at worst.
public struct FileNameKey: Sendable, Hashable, Comparable {
    /// Key units, each below 2²¹ and at least 1, so that a shorter key sorts first.
    @usableFromInline let units: [UInt32]
    /// Units 0 … 2 packed, 21 bits each: most comparisons end here.
    public let prefix: UInt64
    /// Units 3 … 5 packed: most of the other comparisons end here.
    public let prefix2: UInt64
    /// Units 6 … 8 packed: what a sort compares after ``prefix2``.
    public let prefix3: UInt64
    /// 0 … 25 for A … Z, 26 for "#".
    public let indexRank: UInt8

    /// The number of index sections: A–Z and "#".
    public static let indexSectionCount = 27

    /// Makes the key of a file name. Complexity: O(length of the name).
    public init(_ name: String) {
        var units: [UInt32] = []
        units.reserveCapacity(name.utf8.count + 2)
        var builder = Builder()
        var isASCII = true
        for byte in name.utf8 {
            guard byte < 0x80 else {
                isASCII = false
                break
            }
            builder.append(UInt32(byte), to: &units)
        }
        if !isASCII {
            units.removeAll(keepingCapacity: true)
            builder = Builder()
            for scalar in name.unicodeScalars { builder.append(scalar, to: &units) }
        }
        builder.finish(&units)

        func pack(_ start: Int) -> UInt64 {
            var packed: UInt64 = 0
            for position in start..<(start + 3) {
                packed <<= 21
                if position < units.count { packed |= UInt64(units[position]) }
            }
            return packed
        }
        self.units = units
        self.prefix = pack(0)
        self.prefix2 = pack(3)
        self.prefix3 = pack(6)
        if let first = units.first, first >= 0x61 + 1, first <= 0x7A + 1 {
            indexRank = UInt8(first - 0x61 - 1)
        } else {
            indexRank = 26
        }
    }

    /// Units from `start` on, packed three to a chunk like ``prefix`` (0 past the end), in up to
    /// three chunks: lets a sort compare long names nine units at a time in plain integers.
    /// Complexity: O(1).
    public func packedChunks(from start: Int, count: Int) -> (UInt64, UInt64, UInt64) {
        units.withUnsafeBufferPointer { units in
            var chunks: (UInt64, UInt64, UInt64) = (0, 0, 0)
            for chunk in 0..<Swift.min(count, 3) {
                var packed: UInt64 = 0
                for position in (start + 3 * chunk)..<(start + 3 * chunk + 3) {
                    packed <<= 21
                    if position < units.count { packed |= UInt64(units[position]) }
                }
                switch chunk {
                case 0: chunks.0 = packed
                case 1: chunks.1 = packed
                default: chunks.2 = packed
                }
            }
            return chunks
        }
    }

    /// Turns scalars into units, a run of ASCII digits into one number.
    struct Builder {
        /// Where the current number's length unit is, or -1 outside a number.
        var lengthIndex = -1

        mutating func append(_ scalar: Unicode.Scalar, to units: inout [UInt32]) {
            if scalar.value < 0x80 {
                append(scalar.value, to: &units)
            } else {
                finish(&units)
                FileNameKey.appendFolded(scalar, to: &units)
            }
        }

        /// Appends an ASCII scalar.
        @inline(__always)
        mutating func append(_ value: UInt32, to units: inout [UInt32]) {
            if value >= 0x30 && value <= 0x39 {
                if lengthIndex < 0 {
                    units.append(FileNameKey.numberMarker)
                    lengthIndex = units.count
                    units.append(0)
                }
                // Leading zeros do not change the number's value.
                if value == 0x30 && units.count == lengthIndex + 1 { return }
                units.append(value - 0x30 + 1)
                return
            }
            finish(&units)
            let lower = (value >= 0x41 && value <= 0x5A) ? value + 0x20 : value
            units.append(lower + 1)
        }

        /// Closes the current number: its length unit, and a 0 when it was all zeros.
        mutating func finish(_ units: inout [UInt32]) {
            guard lengthIndex >= 0 else { return }
            if units.count == lengthIndex + 1 { units.append(1) }
            units[lengthIndex] = Swift.min(UInt32(units.count - lengthIndex - 1) + 1, FileNameKey.maximumUnit)
            lengthIndex = -1
        }
    }

    /// The index section title: "A" … "Z", or "#".
    public var indexTitle: String { Self.indexTitle(rank: Int(indexRank)) }

    /// The title of an index rank: 0 … 25 give "A" … "Z", anything else "#". Complexity: O(1).
    public static func indexTitle(rank: Int) -> String {
        guard (0..<26).contains(rank) else { return "#" }
        return String(UnicodeScalar(UInt8(0x41 + rank)))
    }

    /// Orders keys as the rule above says. Complexity: O(1) usually, O(length) at worst.
    @inlinable
    public static func < (lhs: FileNameKey, rhs: FileNameKey) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// -1, 0 or 1 as `lhs` sorts before, with, or after `rhs`. Complexity: O(1) usually,
    /// O(length) at worst.
    @inlinable
    public static func compare(_ lhs: FileNameKey, _ rhs: FileNameKey) -> Int {
        if lhs.prefix != rhs.prefix { return lhs.prefix < rhs.prefix ? -1 : 1 }
        if lhs.prefix2 != rhs.prefix2 { return lhs.prefix2 < rhs.prefix2 ? -1 : 1 }
        let count = Swift.min(lhs.units.count, rhs.units.count)
        if count > 6 {
            let order: Int = lhs.units.withUnsafeBufferPointer { left in
                rhs.units.withUnsafeBufferPointer { right in
                    var index = 6
                    while index < count {
                        let a = left[index]
                        let b = right[index]
                        if a != b { return a < b ? -1 : 1 }
                        index += 1
                    }
                    return 0
                }
            }
            if order != 0 { return order }
        }
        if lhs.units.count == rhs.units.count { return 0 }
        return lhs.units.count < rhs.units.count ? -1 : 1
    }

    // MARK: - Folding

    /// Where a number run sorts: as the digit 0 would, so after punctuation and before letters.
    static let numberMarker: UInt32 = 0x30 + 1
    static let maximumUnit: UInt32 = (1 << 21) - 1

    static func appendFolded(_ scalar: Unicode.Scalar, to units: inout [UInt32]) {
        let value = scalar.value
        if value < 0x80 {
            let lower = (value >= 0x41 && value <= 0x5A) ? value + 0x20 : value
            units.append(lower + 1)
            return
        }
        if let folded = LatinFolding.fold(value) {
            units.append(UInt32(folded.first) + 1)
            if let second = folded.second { units.append(UInt32(second) + 1) }
            return
        }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark:
            return
        default:
            break
        }
        if scalar.properties.changesWhenLowercased {
            let lower = scalar.properties.lowercaseMapping.unicodeScalars
            if lower.count == 1, let only = lower.first {
                units.append(only.value + 1)
                return
            }
        }
        units.append(value + 1)
    }
}

/// The base letters of precomposed Latin letters, read once from Unicode scalar names.
enum LatinFolding {
    struct Folded {
        var first: UInt8
        var second: UInt8?
    }

    static let ranges: [ClosedRange<UInt32>] = [0x00C0...0x024F, 0x1E00...0x1EFF]

    /// Packed folds: low byte the first ASCII lower-case letter, next byte the second (or 0);
    /// 0 when the scalar does not fold. One table per range.
    static let tables: [[UInt16]] = ranges.map { range in
        range.map { value in
            guard let scalar = Unicode.Scalar(value) else { return 0 }
            return fold(scalar: scalar)
        }
    }

    static func fold(_ value: UInt32) -> Folded? {
        for (rangeIndex, range) in ranges.enumerated() where range.contains(value) {
            let packed = tables[rangeIndex][Int(value - range.lowerBound)]
            guard packed != 0 else { return nil }
            let second = UInt8(packed >> 8)
            return Folded(first: UInt8(packed & 0xFF), second: second == 0 ? nil : second)
        }
        return nil
    }

    private static let special: [String: String] = [
        "SHARP S": "ss", "AE": "ae", "LIGATURE OE": "oe", "LIGATURE IJ": "ij", "DOTLESS I": "i",
    ]

    /// "LATIN SMALL LETTER E WITH ACUTE" → "e"; the few ligatures by name; else 0.
    private static func fold(scalar: Unicode.Scalar) -> UInt16 {
        guard let name = scalar.properties.name else { return 0 }
        var rest: Substring
        if name.hasPrefix("LATIN SMALL LETTER ") {
            rest = name.dropFirst("LATIN SMALL LETTER ".count)
        } else if name.hasPrefix("LATIN CAPITAL LETTER ") {
            rest = name.dropFirst("LATIN CAPITAL LETTER ".count)
        } else if name.hasPrefix("LATIN SMALL LIGATURE ") || name.hasPrefix("LATIN CAPITAL LIGATURE ") {
            rest = "LIGATURE " + name.split(separator: " ").dropFirst(3).joined(separator: " ")
        } else {
            return 0
        }
        let letters: String
        if let replacement = special[String(rest)] {
            letters = replacement
        } else {
            if let with = rest.firstRange(of: " WITH ") { rest = rest[..<with.lowerBound] }
            guard rest.count == 1, let letter = rest.unicodeScalars.first,
                letter.value >= 0x41, letter.value <= 0x5A
            else { return 0 }
            letters = String(Character(Unicode.Scalar(letter.value + 0x20)!))
        }
        let bytes = Array(letters.utf8)
        return UInt16(bytes[0]) | (bytes.count > 1 ? UInt16(bytes[1]) << 8 : 0)
    }
}
