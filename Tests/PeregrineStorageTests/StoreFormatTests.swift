import PeregrineJSONStorage
import PeregrineJournal
import PeregrinePlistStorage
import PeregrineStorage
import PeregrineStorageTestKit
import TestSupport
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The serializers on their own: exact types, and hostile bytes.
@Suite struct StoreFormatTests {
    static let formats: [any StoreFormat] = [JSONRecordFormat(), BinaryPropertyListFormat()]

    func decode(_ format: any StoreFormat, _ bytes: [UInt8]) throws(StoreFormatError) -> StoreNode {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(StoreFormatError) in try format.decode(raw) } }
        return try result.get()
    }

    func roundTrip(_ format: any StoreFormat, _ node: StoreNode) throws(StoreFormatError) -> StoreNode {
        var bytes: [UInt8] = []
        format.encode(node, into: &bytes)
        return try decode(format, bytes)
    }

    @Test(arguments: [0, 1])
    func everyPropertyListValueReadsBackExactly(_ index: Int) throws {
        let format = Self.formats[index]
        for (key, value) in StoreFixtures.metaInfo {
            let node = StoreRecordCoding.propertyNode(value)
            let back = try roundTrip(format, node)
            #expect(try StoreRecordCoding.propertyValue(back) == value, "\(format.name): \(key)")
        }
        for value: PropertyListValue in [.real(.infinity), .real(-.infinity), .real(-0.0), .integer(0), .real(0)] {
            #expect(
                try StoreRecordCoding.propertyValue(try roundTrip(format, StoreRecordCoding.propertyNode(value)))
                    == value)
        }
        let nan = try roundTrip(format, .real(.nan))
        guard case .real(let number) = nan else { Issue.record("NaN came back as \(nan)"); return }
        #expect(number.isNaN)
        // A damaged date of NaN seconds reads back as itself (the fuzzer's input of 2026-11-28):
        // equal as a node, and hashed alike whatever the NaN's payload bits.
        let nanDate = StoreNode.date(Date(timeIntervalSinceReferenceDate: .nan))
        let otherNaN = Double(bitPattern: Double.nan.bitPattern | 0x5090)
        #expect(try roundTrip(format, nanDate) == nanDate)
        #expect(Set([nanDate, .date(Date(timeIntervalSinceReferenceDate: otherNaN))]).count == 1)
        #expect(Set([StoreNode.real(.nan), .real(otherNaN)]).count == 1)
    }

    @Test func jsonKeepsIntegersAndRealsApart() throws {
        let format = JSONRecordFormat()
        var bytes: [UInt8] = []
        format.encode(.array([.integer(1), .real(1), .real(1e20), .integer(.min)]), into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "[1,1.0,1e+20,-9223372036854775808]")
        #expect(
            try decode(format, Array("[2, 2.0, 2e0, 99999999999999999999]".utf8))
                == .array([.integer(2), .real(2), .real(2), .real(1e20)]))
    }

    /// Dictionaries whose keys look like the JSON format's tags, alone and beside other keys, at
    /// every depth, read back as they were; and a `$dict` key beside others in the file is read as
    /// an ordinary value (the fuzzer's input of 2026-11-28 read back as a different node).
    @Test func jsonDictionariesWithTagLikeKeysReadBackExactly() throws {
        let format = JSONRecordFormat()
        let leaves: [StoreNode] = [
            .real(1_111_777.125), .string("nan"), .dictionary([]), .dictionary([("$k", .integer(1))]),
            .dictionary([("$date", .real(3))]), .real(.infinity),
        ]
        var nodes = leaves
        for key in ["$dict", "$date", "$k", "plain"] {
            for leaf in leaves {
                nodes.append(.dictionary([(key, leaf)]))
                nodes.append(.dictionary([(key, leaf), ("qal", .string("nan"))]))
                nodes.append(.dictionary([("first", .integer(0)), (key, .dictionary([(key, leaf)]))]))
                nodes.append(.dictionary([(key, .dictionary([("$dict", leaf)]))]))
                nodes.append(.array([.dictionary([(key, .dictionary([(key, leaf)]))])]))
            }
        }
        for node in nodes {
            let back = try roundTrip(format, node)
            var bytes: [UInt8] = []
            format.encode(node, into: &bytes)
            #expect(back == node, "\(node) was written as \(String(decoding: bytes, as: UTF8.self))")
        }
        let found = #"{"nested":{"$dict":{"$k":1.5},"qal":"nan"},"$dict":{"$real":"inf"},"b":1}"#
        #expect(throws: StoreFormatError.self) { try decode(format, Array(found.utf8)) }
        let ordinary = #"{"nested":{"$dict":{"$real":"inf"},"qal":"nan"}}"#
        let node = try decode(format, Array(ordinary.utf8))
        #expect(node == .dictionary([("nested", .dictionary([("$dict", .real(.infinity)), ("qal", .string("nan"))]))]))
        #expect(try roundTrip(format, node) == node)
    }

    /// Replay one seed with `PEREGRINE_JSON_REAL_SEED=SEED`.
    @Test(arguments: SeededRandom.seeds(from: "PEREGRINE_JSON_REAL_SEED", defaults: [1, 2, 3]))
    func jsonReadsEveryRealBackBitForBit(seed: UInt64) throws {
        let format = JSONRecordFormat()
        var random = SeededRandom(seed: seed)
        var values: [Double] = [0, -0.0, 0.1, 1.5, -2.25, 1e21, 1e-7, .greatestFiniteMagnitude, .leastNonzeroMagnitude]
        for _ in 0..<3_000 {
            values.append(Double(bitPattern: random.next()))  // any real (the loop skips NaN and infinities)
            values.append(700_000_000 + Double(random.next() % 100_000_000) / 1000)  // a date's seconds
            values.append(Double(Int64(truncatingIfNeeded: random.next()) % 1_000_000_000_000) / 1e6)
        }
        for value in values where value.isFinite {
            var bytes: [UInt8] = []
            format.encode(.real(value), into: &bytes)
            guard case .real(let back) = try decode(format, bytes) else {
                Issue.record("\(value) did not come back as a real")
                continue
            }
            #expect(back.bitPattern == value.bitPattern, "\(value) came back as \(back)")
        }
        // Decimals as people write them read as strtod reads them.
        for text in [
            "0.1", "123.456", "-0.0", "1.0", "0.000000000000000000001", "999999999999999.9", "9007199254740993.0",
            "0.30000000000000004", "1234567890.123456789", "-17.5",
        ] {
            guard case .real(let back) = try decode(format, Array(text.utf8)) else {
                Issue.record("\(text) did not read as a real")
                continue
            }
            #expect(back.bitPattern == Double(text)!.bitPattern, "\(text) read as \(back)")
        }
    }

    @Test(arguments: [0, 1])
    func hostileBytesAreErrorsNotCrashes(_ index: Int) throws {
        let format = Self.formats[index]
        var valid: [UInt8] = []
        format.encode(StoreRecordCoding.node(.putTask(StoreFixtures.fullTask())), into: &valid)
        var generator = SystemRandomNumberGenerator()
        var samples: [[UInt8]] = [
            [], [0], Array("{".utf8), Array("[[[[[[[[".utf8), Array(repeating: UInt8(ascii: "["), count: 10_000),
        ]
        for length in stride(from: 0, to: valid.count, by: max(1, valid.count / 50)) {
            samples.append(Array(valid.prefix(length)))
        }
        for _ in 0..<300 {
            var mutated = valid
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                mutated[Int.random(in: 0..<mutated.count, using: &generator)] = UInt8.random(
                    in: 0...255, using: &generator)
            }
            samples.append(mutated)
        }
        for sample in samples {
            // Either an error or some node: never a trap.
            if let node = try? decode(format, sample) { _ = try? StoreRecordCoding.change(node) }
        }
    }

    @Test func binaryPlistRecordsAreNativePropertyLists() throws {
        // Foundation's own decoder reads a record, with the native types.
        struct Record: Decodable {
            var op: String
            var url: String
            var file: String
            var width: Int
        }
        let change = StoreChange.setCustomThumbnail(urlString: "https://a/1", StoreFixtures.thumbnail)
        var bytes: [UInt8] = []
        BinaryPropertyListFormat().encode(StoreRecordCoding.node(change), into: &bytes)
        let record = try PropertyListDecoder().decode(Record.self, from: Data(bytes))
        #expect(record.op == "thumbnail")
        #expect(record.width == 128)
        struct Meta: Decodable {
            var date: Date
            var data: Data
            var max: Int64
            var string: String
        }
        var metaBytes: [UInt8] = []
        let meta: [String: PropertyListValue] = [
            "date": .date(StoreFixtures.date), "data": .data(Data([1, 2])), "max": .integer(.max),
            "string": .string("日本 😀"),
        ]
        BinaryPropertyListFormat().encode(StoreRecordCoding.propertyNode(.dictionary(meta)), into: &metaBytes)
        let decoded = try PropertyListDecoder().decode(Meta.self, from: Data(metaBytes))
        #expect(decoded.date == StoreFixtures.date)
        #expect(decoded.data == Data([1, 2]))
        #expect(decoded.max == .max)
        #expect(decoded.string == "日本 😀")
    }

    @Test func framingFindsTornAndDamagedRecords() {
        for framing in [RecordFraming.lines, .binary] {
            var bytes: [UInt8] = []
            for index in 0..<3 { framing.append(Array("record \(index)".utf8), to: &bytes) }
            var seen: [String] = []
            let end = bytes.dropLast(3).withUnsafeBytes { raw in
                framing.scan(raw) { payload, matches, _ in
                    if matches { seen.append(String(decoding: payload, as: UTF8.self)) }
                }
            }
            #expect(seen == ["record 0", "record 1"])
            guard case .torn = end else { Issue.record("\(framing): \(end)"); continue }
        }
    }

    @Test func aScanPausesAtItsLimitAndGoesOnFromThere() {
        for framing in [RecordFraming.lines, .binary] {
            var bytes: [UInt8] = []
            for index in 0..<50 { framing.append(Array("record \(index)".utf8), to: &bytes) }
            var seen: [String] = []
            var offset = 0
            var pauses = 0
            while true {
                let end = bytes.withUnsafeBytes { raw in
                    framing.scan(raw, from: offset, pausingAt: offset + 37) { payload, matches, _ in
                        if matches { seen.append(String(decoding: payload, as: UTF8.self)) }
                    }
                }
                guard case .paused(let next) = end else {
                    #expect(end == .clean, "\(framing)")
                    break
                }
                #expect(next > offset)
                offset = next
                pauses += 1
            }
            #expect(seen == (0..<50).map { "record \($0)" }, "\(framing)")
            #expect(pauses >= 10, "\(framing): \(pauses) pauses")
        }
    }

    @Test func zeroFilledSpaceAfterTheLastRecordIsClean() {
        for framing in [RecordFraming.lines, .binary] {
            var bytes: [UInt8] = []
            for index in 0..<3 { framing.append(Array("record \(index)".utf8), to: &bytes) }
            let records = bytes.count
            bytes += [UInt8](repeating: 0, count: 70_000)
            func scan(_ bytes: [UInt8]) -> ([String], RecordFraming.End) {
                var seen: [String] = []
                let end = bytes.withUnsafeBytes { raw in
                    framing.scan(raw) { payload, matches, _ in
                        if matches { seen.append(String(decoding: payload, as: UTF8.self)) }
                    }
                }
                return (seen, end)
            }
            let (all, clean) = scan(bytes)
            #expect(all == ["record 0", "record 1", "record 2"], "\(framing)")
            #expect(clean == .clean, "\(framing)")
            // The last record's end never written: torn, however much zeroed space follows.
            var cut = bytes
            for index in (records - 3)..<records { cut[index] = 0 }
            let (two, torn) = scan(cut)
            #expect(two == ["record 0", "record 1"], "\(framing)")
            guard case .torn = torn else { Issue.record("\(framing): \(torn)"); continue }
            // Bytes that are not zero after the space are not a clean end.
            var after = bytes
            after[after.count - 1] = 7
            let (_, trailing) = scan(after)
            #expect(trailing != .clean, "\(framing)")
        }
    }
}
