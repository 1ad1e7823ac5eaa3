import Foundation
import PeregrineService
import Testing

/// The service's own JSON parser and writer (`JSONValue.parse`, `serialized`): what they read,
/// what they refuse, and that they agree with Foundation's `JSONDecoder` on the values they share.
@Suite struct JSONParserTests {
    private func parse(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    @Test func readsEveryKindOfValue() throws {
        let value = try parse(#" {"a" : [1, -2, 1.5, true, false, null, "x", {}, []], "b":{"c":"d"}} "#)
        #expect(
            value
                == .object([
                    "a": [1, -2, .double(1.5), true, false, .null, "x", .object([:]), .array([])],
                    "b": ["c": "d"],
                ]))
    }

    @Test func integralNumbersReadAsIntegersAsJSONDecoderReadsThem() throws {
        #expect(try parse("7") == .integer(7))
        #expect(try parse("-0") == .integer(0))
        #expect(try parse("1.0") == .integer(1))
        #expect(try parse("1e3") == .integer(1000))
        #expect(try parse("9223372036854775807") == .integer(.max))
        #expect(try parse("-9223372036854775808") == .integer(.min))
        #expect(try parse("18446744073709551616") == .double(18_446_744_073_709_551_616))
        #expect(try parse("0.25") == .double(0.25))
        #expect(try parse("-2.5E-1") == .double(-0.25))
        #expect(throws: (any Error).self) { try parse("1e400") }
    }

    @Test func escapesDecodeToTheirCharacters() throws {
        #expect(try parse(#""\u00e9\ud83d\ude00\n\t\r\b\f\/\\\"""#) == .string("é😀\n\t\r\u{8}\u{c}/\\\""))
        #expect(try parse(#""plain é""#) == .string("plain é"))
    }

    @Test func refusesWhatIsNotJSON() {
        let refused = [
            "", " ", "nul", "tru", "-", "1.", ".5", "1e", "01", "+1", "[1,]", #"{"a":1,}"#, "{} x", "[", "{",
            #"{"a"}"#, #"{1:2}"#, #""unterminated"#, #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\x""#,
            #""\u12""#, "\"a\u{1}b\"", "[1 2]", "NaN", "Infinity",
        ]
        for text in refused {
            #expect(throws: (any Error).self, "\(text.debugDescription) was read") { try parse(text) }
        }
        // Invalid UTF-8 inside a string.
        #expect(throws: (any Error).self) { try JSONValue.parse([0x22, 0xFF, 0x22]) }
        #expect(throws: (any Error).self) { try JSONValue.parse([0x22, 0x5C, 0x6E, 0xC3, 0x22]) }
    }

    /// Found by `FuzzRPCRequest` (`Fuzz/Corpus/FuzzRPCRequest/fuzz-duplicate-name`): the parser
    /// kept the last of two `method` members, JSONDecoder the first, so the same body named two
    /// different methods depending on the decoder.
    @Test func aRepeatedNameKeepsItsFirstValueAsJSONDecoderDoes() throws {
        let text = #"{"id":2,"method":"aria2.tellStop1.0","id":3,"method":"aria2.tellStopped","params":[]}"#
        let value = try parse(text)
        #expect(value.objectValue?["method"] == "aria2.tellStop1.0")
        #expect(value.objectValue?["id"] == 2)
        #expect(value == (try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))))
        guard case .single(.call(let call)) = RPCCodec.decode(Array(text.utf8)) else {
            Issue.record("not decoded as one call")
            return
        }
        #expect(call.method == "aria2.tellStop1.0")
    }

    /// Found by `FuzzRPCRequest` (`Fuzz/Corpus/FuzzRPCRequest/fuzz-trailing-comma`): JSONDecoder
    /// reads a trailing comma; the service refuses it, as RFC 8259 (and aria2) do — as a parse
    /// error answered with id null, never a crash.
    @Test func aTrailingCommaIsAParseErrorThoughJSONDecoderReadsIt() throws {
        let text = #"{"id":"m","method":"aria2.pauseAll","params":["token:s3cret"],}"#
        #expect((try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))) != nil)
        #expect(RPCCodec.decode(Array(text.utf8)) == .failure(.parseError))
        #expect(RPCCodec.decode(Array("[1,]".utf8)) == .failure(.parseError))
    }

    /// Found by `FuzzRPCRequest` (`Fuzz/Corpus/FuzzRPCRequest/fuzz-bad-utf8-in-skipped-member`):
    /// JSONDecoder reads a text whose repeated member (which it skips) holds bytes that are no
    /// UTF-8; the service refuses every text that is not UTF-8, as RFC 8259 requires.
    @Test func badUTF8IsAParseErrorEvenInAMemberJSONDecoderSkips() throws {
        var body = Array(#"{"id":2,"method":"aria2.getVersion","method":"aria2.t"#.utf8)
        body += [0xBB, 0xBB]
        body += Array(#"x","params":[]}"#.utf8)
        #expect((try? JSONDecoder().decode(JSONValue.self, from: Data(body))) != nil)
        #expect(RPCCodec.decode(body) == .failure(.parseError))
        // The same with a raw control character (`fuzz-control-in-skipped-member`).
        let control = Array("{\"id\":2,\"method\":\"aria2.getVersion\",\"method\":\"a\u{19}b\",\"params\":[]}".utf8)
        #expect((try? JSONDecoder().decode(JSONValue.self, from: Data(control))) != nil)
        #expect(RPCCodec.decode(control) == .failure(.parseError))
    }

    @Test func deepNestingIsRefusedWithoutExhaustingTheStack() throws {
        let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        #expect(throws: (any Error).self) { try parse(deep) }
        let objects = String(repeating: #"{"a":"#, count: 100_000)
        #expect(throws: (any Error).self) { try parse(objects) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(try parse(fine).arrayValue?.count == 1)
    }

    @Test func serializationEscapesAndReadsBack() throws {
        let value: JSONValue = ["k\"ey": .string("a\"\\\u{1}\u{1f}\n\té😀"), "n": .double(0.5), "i": -3]
        let text = value.serialized
        #expect(text == #"{"k\"ey":"a\"\\\u0001\u001f\n\té😀","n":0.5,"i":-3}"#)
        #expect(try parse(text) == value)
    }

    /// Strings are written eight bytes at a time until a byte needs an escape: a quote, a
    /// backslash, a control character or UTF-8 at every position of strings of 0 to 20 bytes
    /// reads back the same through Foundation's JSONDecoder, and no raw control byte is written.
    @Test func stringsReadBackWhereverTheirEscapesFall() throws {
        let specials: [Character] = ["\"", "\\", "\n", "\r", "\t", "\u{1}", "\u{1f}", "\u{7f}", "é", "😀", " ", "/"]
        for length in 0...20 {
            for position in 0..<max(length, 1) {
                for special in specials {
                    var characters = Array(repeating: Character("x"), count: length)
                    if length > 0 { characters[position] = special }
                    if length > 3 { characters[length - 1] = "\"" }
                    let string = String(characters)
                    let text = JSONValue.string(string).serialized
                    #expect(!text.utf8.contains { $0 < 0x20 }, "\(text)")
                    #expect(try JSONDecoder().decode(String.self, from: Data(text.utf8)) == string, "\(text)")
                    #expect(try parse(text) == .string(string), "\(text)")
                }
            }
        }
    }

    /// Objects keep their members in order — as built, as read — with each name once: an object
    /// built from pairs keeps a repeated name's last value, a read one its first (as JSONDecoder
    /// reads it). Past the size where names are indexed, lookups, replacements and removals still find
    /// the right member, and equality and hashing ignore the order, as a dictionary's do.
    @Test func objectsKeepTheirMembersInOrderEachNameOnce() throws {
        let built = JSONValue.object(JSONObject([("z", 1), ("a", 2), ("m", 3), ("a", 4)]))
        #expect(built.serialized == #"{"z":1,"a":4,"m":3}"#)
        #expect((["z": 1, "a": 2, "m": 3] as JSONValue).serialized == #"{"z":1,"a":2,"m":3}"#)
        let read = try parse(#"{"z":1,"a":2,"m":3,"a":4}"#)
        #expect(read.serialized == #"{"z":1,"a":2,"m":3}"#)
        #expect(read == ["m": 3, "a": 2, "z": 1])
        #expect(read != ["m": 3, "a": 4, "z": 1])
        #expect(read != ["m": 3, "a": 2])
        #expect(Set([read, ["a": 2, "m": 3, "z": 1]]).count == 1)

        for count in [JSONObject.indexedCount - 1, JSONObject.indexedCount + 1, 1_000] {
            let names = (0..<count).map { "k\(($0 * 7919) % count)" }
            let text = "{" + names.enumerated().map { "\"\($1)\":\($0)" }.joined(separator: ",") + #","k0":-1}"#
            let value = try parse(text)
            var object = try #require(value.objectValue, "\(count)")
            #expect(object.count == count)
            #expect(object.keys == names, "\(count): the order read")
            for (position, name) in names.enumerated() {
                #expect(object[name] == .integer(Int64(position)), "\(count): \(name)")
            }
            object[names[count / 2]] = nil
            object["new"] = "x"
            object[names[0]] = "first"
            #expect(object.count == count)
            #expect(object[names[count / 2]] == nil)
            let after = JSONValue.integer(Int64(count / 2 + 1))
            #expect(object[names[count / 2 + 1]] == after, "\(count): after a removal")
            #expect(object.keys.last == "new")
            #expect(object["new"] == "x")
            #expect(object[names[0]] == "first")
            let pairs: [(String, JSONValue)] = object.reversed().map { ($0.key, $0.value) }
            let reordered = JSONObject(pairs)
            #expect(reordered.keys == object.keys.reversed())
            #expect(reordered == object)
            #expect(reordered.hashValue == object.hashValue)
            #expect(try parse(JSONValue.object(object).serialized) == .object(object))
        }
    }

    @Test func agreesWithJSONDecoderOnValidTexts() throws {
        let texts = [
            #"{"jsonrpc":"2.0","id":"q1","method":"aria2.tellStatus","params":["token:x","00ff",["gid"]]}"#,
            #"[{"id":1,"method":"a"},5,{"id":2.5},null,true,"\u0041\ud83d\ude00"]"#,
            #"{"a":{"b":{"c":[[],{},-1e-3,1E+2]}}}"#,
        ]
        for text in texts {
            let foundation = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(try parse(text) == foundation, "\(text)")
        }
    }
}
