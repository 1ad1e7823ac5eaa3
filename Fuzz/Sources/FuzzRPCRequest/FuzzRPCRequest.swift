// Fuzzes the download service's JSON-RPC request path without a network: the body goes
// through `RPCCodec.decode` and `RPCDispatcher.respond(to:)` (and `immediateResponse(to:)`,
// which must agree with it) — the code `POST /jsonrpc` and
// every WebSocket message run — on a `DownloadManager` with an in-memory store and a manual
// mock transport (nothing downloads), holding one paused and one waiting download.
//
// Input: the request body, as a client would send it (secret `s3cret`).
// Checked beyond "no crash":
// - the answer is JSON: for a body that is no JSON or is refused whole, one error object with
//   id null; for one request, one response object; for a batch, an array with one response per
//   entry; every response has "jsonrpc":"2.0", an id, and exactly one of result and error, an
//   error with an integer code and a string message;
// - the parser agrees with Foundation's `JSONDecoder` (the service's decoder before it had its
//   own): a text the parser reads, JSONDecoder reads to the same value (numbers compared by
//   value), and a text JSONDecoder reads (shallow, starting with `{` or `[`, without a trailing
//   comma, all valid UTF-8: JSONDecoder allows the comma, and bad UTF-8 in a value it skips,
//   RFC 8259 neither) the parser reads;
// - a parsed value's own serialization parses back to it.
//
// Each input starts from the same state: the manager is emptied and a new service made.

import Dispatch
import Foundation
import FuzzSupport
import Logging
import Peregrine
import PeregrineMockTransport
import PeregrineStorage
import Synchronization

@testable import PeregrineService

private let quiet = Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() })

/// The manager every input's service works on (one per process: making one per input would
/// cost more than the input).
private let manager: DownloadManager = {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("peregrine-fuzz-rpc-\(getpid())").path
    let transport = MockTransport(server: MockServer(), mode: .manual)
    let store = InMemoryTaskStore(identifier: "fuzz")
    var configuration = DownloadManager.Configuration(
        downloadDirectory: root + "/downloads", stateDirectory: root + "/state", transport: transport,
        storeFactory: { _, _ in store })
    configuration.maxDownloadCount = 2
    configuration.downloadNewFileImmediately = false
    configuration.clock = EngineClock(
        now: { transport.now.offset }, date: { Date(timeIntervalSince1970: 1_700_000_000) },
        schedule: { transport.schedule(after: $0, $1) })
    configuration.listClock = { Date(timeIntervalSince1970: 1_700_000_000) }
    configuration.logger = quiet
    do {
        return try DownloadManager(identifier: "fuzz", manualMode: false, configuration: configuration)
    } catch {
        fuzzFailure("cannot make the manager: \(error)")
    }
}()

private let seedBodies = [
    #"{"jsonrpc":"2.0","id":"a","method":"aria2.addUri","params":["token:s3cret",["http://mock.test/a.bin"],{"pause":"true"}]}"#,
    #"{"jsonrpc":"2.0","id":"b","method":"aria2.addUri","params":["token:s3cret",["http://mock.test/b.bin"]]}"#,
]

/// Runs an async body to completion on the calling (libFuzzer's) thread.
private func runBlocking(_ body: @escaping @Sendable () async -> String) -> String {
    let result = Mutex<String?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0 } ?? ""
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRPCRequest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    plantedControlBug(bytes)
    let body = Array(bytes)

    checkParser(body)

    // A fresh service on an empty manager, with two downloads.
    for url in manager.engine.urlStrings() {
        if manager.indexPath(ofTask: url) != nil { _ = try? manager.deleteTasks([url], keepFinishedFile: false) }
        if manager.engine.task(url) != nil { _ = try? manager.cleanupToDeleteTasks([url]) }
    }
    let service = RPCService(
        manager: manager,
        configuration: RPCServiceConfiguration(port: 0, secret: SecretToken("s3cret")),
        logger: quiet)
    let dispatcher = service.dispatcher
    for seed in seedBodies {
        let answer = runBlocking { await dispatcher.respond(to: Array(seed.utf8)) }
        fuzzRequire(answer.contains("\"result\""), "a seed download was not added: \(debugText(answer))")
    }

    // What the event loop answers by itself (ImmediateRPCHandler) is the general path's answer,
    // or it leaves the body to that path.
    let immediate = dispatcher.immediateResponse(to: body)
    let answer = runBlocking { await dispatcher.respond(to: body) }
    if let immediate {
        fuzzRequire(
            immediate == answer,
            "the immediate answer \(debugText(immediate)) is not the general path's \(debugText(answer))")
    }
    checkAnswer(answer, to: body)
    return 0
}

/// The answer's shape, against what the codec made of the body.
private func checkAnswer(_ answer: String, to body: [UInt8]) {
    guard let value = try? JSONValue.parse(Array(answer.utf8)) else {
        fuzzFailure("the answer is not JSON: \(debugText(answer))")
    }
    switch RPCCodec.decode(body) {
    case .failure:
        checkResponse(value, answer: answer)
        fuzzRequire(value.objectValue?["error"] != nil, "a refused body answered without an error")
        fuzzRequire(value.objectValue?["id"] == .null, "a refused body answered with an id")
    case .single:
        checkResponse(value, answer: answer)
    case .batch(let entries):
        guard let responses = value.arrayValue else { fuzzFailure("a batch answered \(debugText(answer))") }
        fuzzRequire(
            responses.count == entries.count,
            "a batch of \(entries.count) answered \(responses.count) responses: \(debugText(answer))")
        for response in responses { checkResponse(response, answer: answer) }
    }
}

private func checkResponse(_ value: JSONValue, answer: String) {
    guard let object = value.objectValue else { fuzzFailure("a response is no object: \(debugText(answer))") }
    fuzzRequire(object["jsonrpc"] == .string("2.0"), "a response without jsonrpc 2.0: \(debugText(answer))")
    fuzzRequire(object["id"] != nil, "a response without an id: \(debugText(answer))")
    fuzzRequire(
        (object["result"] == nil) != (object["error"] == nil),
        "a response needs exactly one of result and error: \(debugText(answer))")
    if let error = object["error"] {
        guard case .integer = error.objectValue?["code"], case .string = error.objectValue?["message"] else {
            fuzzFailure("an error without an integer code and a string message: \(debugText(answer))")
        }
    }
}

/// The service's parser against Foundation's JSONDecoder, and its own round trip.
private func checkParser(_ body: [UInt8]) {
    let ours = try? JSONValue.parse(body)
    let foundation = try? JSONDecoder().decode(JSONValue.self, from: Data(body))
    if let ours {
        guard let foundation else {
            fuzzFailure(
                "the parser reads a text JSONDecoder refuses: \(debugText(String(decoding: body, as: UTF8.self)))")
        }
        fuzzRequire(
            sameValue(ours, foundation),
            "the parser reads \(ours), JSONDecoder \(foundation), from \(debugText(String(decoding: body, as: UTF8.self)))"
        )
        let text = ours.serialized
        guard let again = try? JSONValue.parse(Array(text.utf8)) else {
            fuzzFailure("a parsed value's serialization does not parse: \(debugText(text))")
        }
        fuzzRequire(sameValue(again, ours), "\(ours) serializes to \(debugText(text)), which reads as \(again)")
    } else if foundation != nil, let first = body.first(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }),
        first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
        body.count(where: { $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "[") }) < JSONParser.maxDepth,
        !hasTrailingComma(body), !hasWhatJSONDecoderSkipsUnchecked(body)
    {
        fuzzFailure("the parser refuses a text JSONDecoder reads: \(debugText(String(decoding: body, as: UTF8.self)))")
    }
}

/// Whether a comma outside strings is followed by `}` or `]`: JSONDecoder reads such texts
/// (`{"a":1,}`), the service's parser refuses them as RFC 8259 does (found by this harness;
/// kept as `Corpus/FuzzRPCRequest/fuzz-trailing-comma`).
private func hasTrailingComma(_ body: [UInt8]) -> Bool {
    var inString = false
    var escaped = false
    var afterComma = false
    for byte in body {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            continue
        }
        switch byte {
        case UInt8(ascii: "\""):
            inString = true
            afterComma = false
        case UInt8(ascii: ","): afterComma = true
        case UInt8(ascii: "}"), UInt8(ascii: "]"): if afterComma { return true }
        case 0x20, 0x0A, 0x0D, 0x09: break
        default: afterComma = false
        }
    }
    return false
}

/// Whether the text has something JSONDecoder lets through in a member it skips (a repeated
/// name's value is never decoded, so never checked): bytes that are not UTF-8, a raw control
/// character, an unknown escape, a surrogate escape. Found by this harness
/// (`Corpus/FuzzRPCRequest/fuzz-bad-utf8-in-skipped-member`, `fuzz-control-in-skipped-member`,
/// `fuzz-newline-in-skipped-member`, `fuzz-leading-zero-in-skipped-member`: a number like
/// `0111`, which RFC 8259 does not allow);
/// the service's parser refuses all of them wherever they are.
/// Whether a minus sign outside strings is not followed by a digit: JSONDecoder checks a number
/// only when it decodes it, and it never decodes a repeated name's value, so it reads
/// `{"id":2,"id":-}`, which RFC 8259 and the service's parser refuse (found by this harness;
/// kept as `Corpus/FuzzRPCRequest/fuzz-repeated-name-lone-minus`).
private func hasMinusWithoutDigit(_ body: [UInt8]) -> Bool {
    var inString = false
    var escaped = false
    for (index, byte) in body.enumerated() {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
        } else if byte == UInt8(ascii: "\"") {
            inString = true
        } else if byte == UInt8(ascii: "-") {
            let next = index + 1 < body.count ? body[index + 1] : 0
            if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) { return true }
        }
    }
    return false
}

private func hasWhatJSONDecoderSkipsUnchecked(_ body: [UInt8]) -> Bool {
    if String(validating: body, as: UTF8.self) == nil { return true }
    if hasNumberWithLeadingZero(body) { return true }
    if hasMinusWithoutDigit(body) { return true }
    if hasFractionOrExponentWithoutDigit(body) { return true }
    if body.contains(where: { $0 < 0x20 && ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) { return true }
    // A raw line feed, carriage return or tab inside a string (whitespace outside one).
    var inString = false
    var escaped = false
    for byte in body {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            } else if byte < 0x20 {
                return true
            }
        } else if byte == UInt8(ascii: "\"") {
            inString = true
        }
    }
    var index = 0
    while index + 1 < body.count {
        if body[index] == UInt8(ascii: "\\") {
            let escape = body[index + 1]
            guard Array(#""\/bfnrtu"#.utf8).contains(escape) else { return true }
            if escape == UInt8(ascii: "u"), index + 2 < body.count, body[index + 2] | 0x20 == UInt8(ascii: "d") {
                return true
            }
            index += 2
        } else {
            index += 1
        }
    }
    return false
}

/// Whether a number outside strings has a `.` or an exponent with no digit after it (`2.`,
/// `2e`, `2e+`): JSONDecoder reads `{"id":2,"id":2e}`, never decoding the repeated name's
/// value, which RFC 8259 and the service's parser refuse (found by this harness; kept as
/// `Corpus/FuzzRPCRequest/fuzz-repeated-name-bare-exponent`).
private func hasFractionOrExponentWithoutDigit(_ body: [UInt8]) -> Bool {
    let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
    var inString = false
    var escaped = false
    var previous: UInt8 = UInt8(ascii: " ")
    for (index, byte) in body.enumerated() {
        defer { previous = byte }
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            continue
        }
        if byte == UInt8(ascii: "\"") {
            inString = true
            continue
        }
        guard digits.contains(previous) else { continue }
        var next = index + 1 < body.count ? body[index + 1] : 0
        if byte == UInt8(ascii: "."), !digits.contains(next) { return true }
        if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") {
                next = index + 2 < body.count ? body[index + 2] : 0
            }
            if !digits.contains(next) { return true }
        }
    }
    return false
}

/// Whether a number outside strings starts with `0` followed by a digit (`0111`, `-01`).
private func hasNumberWithLeadingZero(_ body: [UInt8]) -> Bool {
    var inString = false
    var escaped = false
    var previous: UInt8 = UInt8(ascii: " ")
    for (index, byte) in body.enumerated() {
        defer { previous = byte }
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            continue
        }
        if byte == UInt8(ascii: "\"") {
            inString = true
            continue
        }
        let startsNumber =
            !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(previous) && previous != UInt8(ascii: ".")
            && previous != UInt8(ascii: "e") && previous != UInt8(ascii: "E") && previous != UInt8(ascii: "+")
        if byte == UInt8(ascii: "0"), startsNumber, index + 1 < body.count,
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(body[index + 1])
        {
            return true
        }
    }
    return false
}

/// Equality with numbers compared by value (`1` and `1.0` are the same number).
private func sameValue(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.integer(let x), .double(let y)), (.double(let y), .integer(let x)): return Double(x) == y
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { sameValue($0, $1) }
    case (.object(let x), .object(let y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { sameValue(value, $0) } ?? false }
    default: return a == b
    }
}
