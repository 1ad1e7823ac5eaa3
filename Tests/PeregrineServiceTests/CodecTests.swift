import PeregrineService
import TestSupport
import Testing

/// The JSON-RPC codec without sockets: aria2's answers to bad bodies, batches, ids, and a
/// seeded fuzz run that must never crash.
@Suite struct CodecTests {
    @Test func aBodyThatIsNotJSONIsAParseErrorWithANullID() {
        #expect(RPCCodec.decode(Array("{\"jsonrpc\":".utf8)) == .failure(.parseError))
        #expect(RPCCodec.decode(Array("".utf8)) == .failure(.parseError))
        #expect(RPCError.parseError.code == -32700)
        let text = RPCCodec.response(id: .null, .failure(.parseError)).serialized
        #expect(text == #"{"id":null,"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error."}}"#)
    }

    @Test func jsonThatIsNoRequestIsAnInvalidRequestKeepingItsID() {
        #expect(RPCCodec.decode(Array("5".utf8)) == .single(.invalid(id: .null, .invalidRequest)))
        #expect(RPCCodec.decode(Array(#"{"id":7}"#.utf8)) == .single(.invalid(id: 7, .invalidRequest)))
        // No id, as aria2: refused (a notification nobody would answer), with a null id; an
        // explicit null id is a call.
        #expect(
            RPCCodec.decode(Array(#"{"jsonrpc":"2.0","method":"aria2.pauseAll"}"#.utf8))
                == .single(.invalid(id: .null, .invalidRequest)))
        #expect(
            RPCCodec.decode(Array(#"{"id":null,"method":"m"}"#.utf8))
                == .single(.call(RPCCall(id: .null, method: "m", params: []))))
        #expect(
            RPCCodec.decode(Array(#"{"id":"a","method":3}"#.utf8)) == .single(.invalid(id: "a", .invalidRequest)))
        #expect(
            RPCCodec.decode(Array(#"{"id":1,"method":"m","params":{}}"#.utf8))
                == .single(.invalid(id: 1, .invalidRequest)))
        #expect(
            RPCCodec.decode(Array(#"{"id":[1],"method":"m"}"#.utf8)) == .single(.invalid(id: .null, .invalidRequest)))
    }

    @Test func aCallKeepsItsIDMethodAndParameters() {
        let body = #"{"jsonrpc":"2.0","id":"q1","method":"aria2.tellStatus","params":["token:x","00ff",["gid"]]}"#
        #expect(
            RPCCodec.decode(Array(body.utf8))
                == .single(.call(RPCCall(id: "q1", method: "aria2.tellStatus", params: ["token:x", "00ff", ["gid"]]))))
        #expect(
            RPCCodec.decode(Array(#"{"id":1.5,"method":"m"}"#.utf8))
                == .single(.call(RPCCall(id: .double(1.5), method: "m", params: []))))
    }

    @Test func aBatchAnswersEachEntryInOrderAndAnEmptyBatchIsEmpty() {
        let body = #"[{"id":1,"method":"a"},5,{"id":2}]"#
        #expect(
            RPCCodec.decode(Array(body.utf8))
                == .batch([
                    .call(RPCCall(id: 1, method: "a")), .invalid(id: .null, .invalidRequest),
                    .invalid(id: 2, .invalidRequest),
                ]))
        #expect(RPCCodec.decode(Array("[]".utf8)) == .batch([]))
    }

    @Test func oversizedBodiesAndBatchesAreRefusedWhole() {
        let limits = RPCLimits(maxRequestBytes: 64, maxBatchCount: 2)
        let long = "[" + String(repeating: " ", count: 100) + "]"
        guard case .failure(let error) = RPCCodec.decode(Array(long.utf8), limits: limits) else {
            Issue.record("a body over the limit was decoded")
            return
        }
        #expect(error.code == -32600)
        let batch = #"[{"id":1,"method":"a"},{"id":2,"method":"a"},{"id":3,"method":"a"}]"#
        guard case .failure(let batchError) = RPCCodec.decode(Array(batch.utf8), limits: RPCLimits(maxBatchCount: 2))
        else {
            Issue.record("a batch over the limit was decoded")
            return
        }
        #expect(batchError.message.contains("at most 2"))
    }

    @Test func deeplyNestedJSONIsRefusedNotACrash() {
        let depth = 100_000
        let nested =
            #"{"id":1,"method":"m","params":"# + String(repeating: "[", count: depth)
            + String(repeating: "]", count: depth) + "}"
        switch RPCCodec.decode(Array(nested.utf8)) {
        case .failure(let error): #expect(error == .parseError)
        default: Issue.record("a 100,000-deep body was decoded")
        }
    }

    @Test func serializationEscapesStringsAndRoundTrips() throws {
        let value: JSONValue = [
            "quote\"back\\slash": "line\nbreak\ttab\u{01}é😀", "list": [1, true, .null, .double(0.5), -3],
        ]
        let text = value.serialized
        #expect(text.contains(#""quote\"back\\slash""#))
        #expect(text.contains(#"\u0001"#))
        #expect(try JSONValue.parse(Array(text.utf8)) == value)
    }

    /// Random mutations of valid requests: every one decodes to a call, an invalid entry or a
    /// refusal — never a crash — and anything decoded re-serializes to parseable JSON.
    @Test func fuzzedBodiesNeverCrashTheDecoder() throws {
        let seeds = SeededRandom.seeds(from: "PEREGRINE_FUZZ_SEEDS", defaults: [1, 2, 3])
        let corpus = [
            #"{"jsonrpc":"2.0","id":1,"method":"aria2.addUri","params":["token:s",["http://a/b"],{"split":"4"}]}"#,
            #"[{"jsonrpc":"2.0","id":"x","method":"aria2.tellStopped","params":[-1,2,["gid","status"]]}]"#,
            #"{"jsonrpc":"2.0","id":null,"method":"system.multicall","params":[[{"methodName":"a","params":[]}]]}"#,
        ]
        let alphabet = Array(#"{}[]",:0123456789.-+eEtruefalsn\"u/ "#.utf8) + [0, 0xFF, 0xC3, 0x80]
        for seed in seeds {
            print("fuzz seed \(seed)")
            var random = SeededRandom(seed: seed)
            for _ in 0..<3000 {
                var bytes = Array(corpus[Int.random(in: 0..<corpus.count, using: &random)].utf8)
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    let index = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: bytes[index] = alphabet.randomElement(using: &random)!
                    case 1: bytes.remove(at: index)
                    default: bytes.insert(alphabet.randomElement(using: &random)!, at: index)
                    }
                    if bytes.isEmpty { bytes = [0x7B] }
                }
                let entries: [RPCCodec.Entry]
                switch RPCCodec.decode(bytes) {
                case .single(let entry): entries = [entry]
                case .batch(let batch): entries = batch
                case .failure: entries = []
                }
                for case .call(let call) in entries {
                    let text = JSONValue.array(call.params).serialized
                    let again = try JSONValue.parse(Array(text.utf8)).serialized
                    #expect(again == text, "seed \(seed)")
                }
            }
        }
    }
}
