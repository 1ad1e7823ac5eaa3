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
        #expect(text == #"{"i":-3,"k\"ey":"a\"\\\u0001\u001f\n\té😀","n":0.5}"#)
        #expect(try parse(text) == value)
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
