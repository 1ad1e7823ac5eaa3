import PeregrineCore
import PeregrineStorage

/// How records are delimited inside a snapshot or journal file, each with a CRC-32 so that a
/// record cut by a crash, or damaged later, is recognized instead of misread.
///
/// - ``lines``: one record per line, `<crc as 8 hex digits> <payload>\n` (the payload holds no
///   newline): text that tools can read, used by the JSON backend.
/// - ``binary``: `<length: UInt32 LE> <crc: UInt32 LE> <payload>`, used by the property-list
///   backend.
package enum RecordFraming: Sendable {
    case lines
    case binary

    /// How a scan of a file ended.
    ///
    /// A journal segment is written into space zero-filled ahead of it (so that a sync flushes
    /// data only, not a new file size), and a crash leaves that space as it was: zero bytes after
    /// the last record are the unused rest of the segment, not damage.
    package enum End: Sendable, Equatable {
        /// Every byte belonged to a complete record, or to the zero-filled space after the last.
        case clean
        /// The file ends in an incomplete record from `offset` on (a torn write), perhaps followed
        /// by zero-filled space.
        case torn(offset: Int)
        /// A record at `offset` cannot be delimited, so nothing from there on can be read.
        case damaged(offset: Int)
        /// The scan reached its limit: the next record starts at `offset`, to scan on from.
        case paused(offset: Int)
    }

    /// Appends `payload`, framed.
    package func append(_ payload: [UInt8], to bytes: inout [UInt8]) {
        let crc = CRC32.checksum(payload)
        switch self {
        case .lines:
            let digits: [UInt8] = Array("0123456789abcdef".utf8)
            for shift in stride(from: 28, through: 0, by: -4) {
                bytes.append(digits[Int((crc >> UInt32(shift)) & 0xF)])
            }
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: payload)
            bytes.append(UInt8(ascii: "\n"))
        case .binary:
            withUnsafeBytes(of: UInt32(payload.count).littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: crc.littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: payload)
        }
    }

    /// The first record's payload, when it is complete (a file's header), checksum unchecked.
    package func firstRecord(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var first: UnsafeRawBufferPointer?
        switch self {
        case .lines:
            guard let base = bytes.baseAddress, let newline = memchr(base, 0x0A, bytes.count) else { return nil }
            let end = base.distance(to: UnsafeRawPointer(newline))
            guard end > 9 else { return nil }
            first = UnsafeRawBufferPointer(rebasing: bytes[9..<end])
        case .binary:
            guard bytes.count >= 8 else { return nil }
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self)))
            guard length > 0, length <= bytes.count - 8 else { return nil }
            first = UnsafeRawBufferPointer(rebasing: bytes[8..<(8 + length)])
        }
        return first
    }

    /// Calls `body` with each record's payload, whether its checksum matched, and its offset.
    ///
    /// A line whose checksum does not match is still handed over (the caller decides whether a
    /// hand-edited line is readable); a binary record whose checksum does not match ends the
    /// scan, since its length cannot be trusted either.
    ///
    /// The scan starts at `offset` (a record boundary) and pauses at the first record that
    /// starts at or after `limit`, so that a large file is read a window at a time.
    package func scan(
        _ bytes: UnsafeRawBufferPointer, from offset: Int = 0, pausingAt limit: Int = .max,
        _ body: (UnsafeRawBufferPointer, Bool, Int) -> Void
    ) -> End {
        switch self {
        case .lines: scanLines(bytes, from: offset, pausingAt: limit, body)
        case .binary: scanBinary(bytes, from: offset, pausingAt: limit, body)
        }
    }

    private func scanLines(
        _ bytes: UnsafeRawBufferPointer, from offset: Int, pausingAt limit: Int,
        _ body: (UnsafeRawBufferPointer, Bool, Int) -> Void
    ) -> End {
        var start = offset
        let count = bytes.count
        guard let base = bytes.baseAddress else { return .clean }
        while start < count {
            if start >= limit { return .paused(offset: start) }
            let remaining = count - start
            guard let newline = memchr(base + start, 0x0A, remaining) else {
                return Self.isZero(bytes, from: start) ? .clean : .torn(offset: start)
            }
            let end = base.distance(to: UnsafeRawPointer(newline))
            let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            if line.count >= 9, line[8] == UInt8(ascii: " "), let expected = Self.parseHex(line) {
                let payload = UnsafeRawBufferPointer(rebasing: line[9...])
                body(payload, CRC32.checksum(payload) == expected, start)
            } else if !line.isEmpty {
                // No checksum prefix: hand-written or damaged; let the caller try it.
                body(line, false, start)
            }
            start = end + 1
        }
        return .clean
    }

    /// Whether every byte from `offset` to the end is zero (true for an empty range).
    static func isZero(_ bytes: UnsafeRawBufferPointer, from offset: Int) -> Bool {
        guard offset < bytes.count, let base = bytes.baseAddress else { return true }
        var pointer = base + offset
        var remaining = bytes.count - offset
        // Word at a time once aligned; the zero-filled tail of a segment is up to a few MiB.
        while remaining > 0, Int(bitPattern: pointer) & 7 != 0 {
            if pointer.load(as: UInt8.self) != 0 { return false }
            pointer += 1
            remaining -= 1
        }
        while remaining >= 8 {
            if pointer.load(as: UInt64.self) != 0 { return false }
            pointer += 8
            remaining -= 8
        }
        while remaining > 0 {
            if pointer.load(as: UInt8.self) != 0 { return false }
            pointer += 1
            remaining -= 1
        }
        return true
    }

    private static func parseHex(_ line: UnsafeRawBufferPointer) -> UInt32? {
        var value: UInt32 = 0
        for index in 0..<8 {
            let byte = line[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private func scanBinary(
        _ bytes: UnsafeRawBufferPointer, from offset: Int, pausingAt limit: Int,
        _ body: (UnsafeRawBufferPointer, Bool, Int) -> Void
    ) -> End {
        var start = offset
        let count = bytes.count
        while start < count {
            if start >= limit { return .paused(offset: start) }
            guard count - start >= 8 else { return .torn(offset: start) }
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
            let expected = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 4, as: UInt32.self))
            guard length > 0 else {
                if Self.isZero(bytes, from: start) { return .clean }
                return count - start <= 8 + 4096 ? .torn(offset: start) : .damaged(offset: start)
            }
            guard length <= count - start - 8 else { return .torn(offset: start) }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(start + 8)..<(start + 8 + length)])
            guard CRC32.checksum(payload) == expected else {
                // The last record, cut by a crash: nothing but zero-filled space after it.
                return Self.isZero(bytes, from: start + 8 + length) ? .torn(offset: start) : .damaged(offset: start)
            }
            body(payload, true, start)
            start += 8 + length
        }
        return .clean
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
