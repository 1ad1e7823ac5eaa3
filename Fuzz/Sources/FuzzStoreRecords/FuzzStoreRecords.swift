// Fuzzes the store's record decoders: the JSON and binary property-list record formats, the
// record framing of snapshot and journal files, and the record coding that turns nodes into
// store changes.
//
// Input: byte 0 picks the format (even: JSON, odd: binary plist) and whether the rest is one
// record (bit 1 clear) or a framed file (bit 1 set). Checked beyond "no crash", as
// `StoreFormat` requires: a decoded node encodes to bytes that decode to the same node, and a
// decoded change encodes to a node that decodes to the same change.

import FuzzSupport

@testable import PeregrineJSONStorage
@testable import PeregrineJournal
@testable import PeregrinePlistStorage
@testable import PeregrineStorage

private let formats: [any StoreFormat] = [JSONRecordFormat(), BinaryPropertyListFormat()]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStoreRecords(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    plantedControlBug(bytes)

    var reader = FuzzReader(bytes)
    let selector = reader.byte()
    let format = formats[Int(selector & 1)]
    let rest = UnsafeRawBufferPointer(reader.rest)
    if selector & 2 == 0 {
        checkRecord(rest, format: format)
    } else {
        if let header = format.framing.firstRecord(rest) {
            if let node = try? format.decode(header) { _ = StoreFileHeader(node) }
        }
        var records = 0
        var offsets: [Int] = []
        let end = format.framing.scan(rest) { payload, _, offset in
            records += 1
            offsets.append(offset)
            fuzzRequire(offset >= 0 && offset < rest.count, "record offset \(offset) outside \(rest.count) bytes")
            if records <= 64 { checkRecord(payload, format: format) }
        }
        switch end {
        case .clean: break
        case .torn(let offset), .damaged(let offset):
            fuzzRequire(offset >= 0 && offset <= rest.count, "scan end offset \(offset) outside \(rest.count) bytes")
        case .paused(let offset):
            fuzzFailure("a scan without a limit paused at \(offset)")
        }
        // A window at a time (as a store reads a file), the same records and the same end.
        let window = Int(selector >> 2) + 1
        var windowed: [Int] = []
        var start = 0
        var windowedEnd = RecordFraming.End.clean
        while true {
            windowedEnd = format.framing.scan(rest, from: start, pausingAt: start + window) { _, _, offset in
                windowed.append(offset)
            }
            guard case .paused(let next) = windowedEnd else { break }
            fuzzRequire(next > start && next <= rest.count, "a scan paused at \(next) after starting at \(start)")
            start = next
        }
        fuzzRequire(windowed == offsets, "windows of \(window) bytes delimit other records than one scan")
        fuzzRequire(windowedEnd == end, "windows of \(window) bytes end as \(windowedEnd), one scan as \(end)")
    }
    return 0
}

private func checkRecord(_ payload: UnsafeRawBufferPointer, format: any StoreFormat) {
    guard let node = try? format.decode(payload) else { return }
    var encoded: [UInt8] = []
    format.encode(node, into: &encoded)
    do {
        let again = try encoded.withUnsafeBytes { buffer throws(StoreFormatError) in try format.decode(buffer) }
        fuzzRequire(again == node, "\(format.name): a decoded node does not survive encode/decode: \(node) → \(again)")
    } catch {
        fuzzFailure("\(format.name): a decoded node's encoding does not decode: \(error); node: \(node)")
    }
    _ = StoreFileHeader(node)
    guard let change = try? StoreRecordCoding.change(node) else { return }
    let changeNode = StoreRecordCoding.node(change)
    do {
        let again = try StoreRecordCoding.change(changeNode)
        // Compared as nodes: `StoreNode` equates NaN with NaN, the synthesized `==` of a change does not.
        fuzzRequire(
            again == change || StoreRecordCoding.node(again) == changeNode,
            "\(format.name): a decoded change does not survive node/change: \(change)")
    } catch {
        fuzzFailure("\(format.name): a decoded change's node does not decode: \(error.message); change: \(change)")
    }
}
