/// A range of bytes to request, as in `Range: bytes=start-end` (RFC 9110 §14.1.2).
///
/// `end` is inclusive and optional: `ByteRange(start: 100)` asks for everything from byte 100.
/// The bounds are read-only, so the initialiser's checks hold for every value: make a new range
/// to change them.
public struct ByteRange: Sendable, Hashable, CustomStringConvertible {
    /// The first byte wanted, counted from zero.
    public let start: Int64
    /// The last byte wanted (inclusive), or nil for "to the end".
    public let end: Int64?

    /// Creates a range; `start` must be ≥ 0 and `end`, if given, ≥ `start`.
    public init(start: Int64, end: Int64? = nil) {
        precondition(start >= 0, "a byte range starts at or after zero")
        precondition(end.map { $0 >= start } ?? true, "a byte range ends at or after its start")
        precondition(end.map { $0 < Int64.max } ?? true, "a byte range ends before Int64.max")
        self.start = start
        self.end = end
    }

    /// The number of bytes the range covers, when it has an end.
    public var length: Int64? { end.map { $0 - start + 1 } }

    /// The range in the form libcurl's `CURLOPT_RANGE` and the `Range` header use, without `bytes=`.
    public var specifier: String { "\(start)-\(end.map(String.init) ?? "")" }

    /// The value of a `Range` header for this range.
    public var headerValue: String { "bytes=\(specifier)" }

    public var description: String { headerValue }
}

/// A parsed `Content-Range` header of a 206 or 416 response (RFC 9110 §14.4).
public struct ContentRange: Sendable, Hashable, CustomStringConvertible {
    /// The first and last byte (inclusive) the response carries; nil for `bytes */total`.
    public var first: Int64?
    /// The last byte the response carries, inclusive.
    public var last: Int64?
    /// The complete length of the representation, when the server knows it.
    public var completeLength: Int64?

    /// Creates a value directly.
    public init(first: Int64?, last: Int64?, completeLength: Int64?) {
        self.first = first
        self.last = last
        self.completeLength = completeLength
    }

    /// Parses `bytes first-last/complete`, `bytes first-last/*` or `bytes */complete`.
    ///
    /// Returns nil for anything else, including a range whose last byte precedes its first or
    /// lies beyond the complete length: a server that sends such a header is not to be trusted.
    public init?(headerValue: String) {
        var text = Substring(headerValue).drop { $0 == " " }
        guard text.lowercased().hasPrefix("bytes") else { return nil }
        text = text.dropFirst(5).drop { $0 == " " || $0 == "=" }
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let lengthText = parts[1].trimmingCharacters(in: " ")
        if lengthText == "*" {
            completeLength = nil
        } else {
            guard let length = Int64(decimalDigits: lengthText) else { return nil }
            completeLength = length
        }
        let rangeText = parts[0].trimmingCharacters(in: " ")
        if rangeText == "*" {
            guard completeLength != nil else { return nil }
            first = nil
            last = nil
            return
        }
        let bounds = rangeText.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        // `last < Int64.max` keeps `length` (last - first + 1) from overflowing.
        guard bounds.count == 2, let first = Int64(decimalDigits: bounds[0]),
            let last = Int64(decimalDigits: bounds[1]),
            last >= first, last < Int64.max
        else { return nil }
        if let completeLength, last >= completeLength { return nil }
        self.first = first
        self.last = last
    }

    /// The number of bytes the response body carries, when the header names a range.
    public var length: Int64? {
        guard let first, let last else { return nil }
        return last - first + 1
    }

    public var description: String {
        let range = first.map { "\($0)-\(last ?? $0)" } ?? "*"
        return "bytes \(range)/\(completeLength.map(String.init) ?? "*")"
    }
}

extension Int64 {
    /// Parses ASCII digits only — no sign, no spaces — as HTTP's length fields require
    /// (RFC 9110 §8.6, §14.4); nil when empty, anything else, or too large.
    package init?(decimalDigits text: some StringProtocol) {
        var value: Int64 = 0
        var digits = 0
        for byte in text.utf8 {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = shifted.addingReportingOverflow(Int64(byte &- 0x30))
            guard !overflowA, !overflowB else { return nil }
            value = sum
            digits += 1
        }
        guard digits > 0 else { return nil }
        self = value
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> Substring {
        var text = self
        while text.first == set { text.removeFirst() }
        while text.last == set { text.removeLast() }
        return text
    }
}
