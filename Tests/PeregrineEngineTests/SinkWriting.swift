import PeregrineTransport
import TestSupport

extension TransferSink {
    /// Writes `bytes[range]` at `offset`.
    func write(_ bytes: [UInt8], _ range: Range<Int>, at offset: Int) throws {
        try bytes.withUnsafeBytes { raw in
            try write(UnsafeRawBufferPointer(rebasing: raw[range]), at: Int64(offset))
        }
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: [UInt8], at offset: Int) throws {
        try write(bytes, 0..<bytes.count, at: offset)
    }

    /// Writes `content` at `offset` in random chunks of 1 byte to `maxChunk`, in order.
    func writeInRandomChunks(
        _ content: [UInt8],
        at offset: Int,
        maxChunk: Int = 3 << 20,
        using generator: inout SeededRandom
    ) throws {
        var done = 0
        while done < content.count {
            let count = min(generator.chunkSize(upTo: maxChunk), content.count - done)
            try write(content, done..<(done + count), at: offset + done)
            done += count
        }
    }
}

/// The content a file must hold after a series of writes, to compare a sink's result with.
struct ExpectedFile {
    private(set) var bytes: [UInt8]

    init(existing: [UInt8] = []) { bytes = existing }

    /// Applies a write: the file grows (with zeros in any gap) and the range is replaced.
    mutating func write(_ source: [UInt8], _ range: Range<Int>, at offset: Int) {
        guard !range.isEmpty else { return }
        let end = offset + range.count
        // Not `repeatElement`: appending one is byte by byte in a debug build.
        if bytes.count < end { bytes += [UInt8](repeating: 0, count: end - bytes.count) }
        bytes.withUnsafeMutableBytes { target in
            source.withUnsafeBytes { source in
                (target.baseAddress! + offset).copyMemory(
                    from: source.baseAddress! + range.lowerBound, byteCount: range.count)
            }
        }
    }
}
