import PeregrineCore
import PeregrineTransport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// What `peregrine get` tells people and scripts.
///
/// Standard output carries only results: the path of every file that is in place (downloaded
/// now, or complete already), one per line — or, with `--json`, one JSON object per line for
/// every event: `added`, `progress` (at most once a second per download), `retrying`,
/// `finished` (path, size, and the verified digest when a checksum was given), `complete`
/// (already there), `skipped` and `failed` (code, exit status, message). Human progress, with
/// speed and remaining time, and one line per failure go to standard error.
final class GetReporter: Sendable {
    private struct State {
        var slots: [String: Int] = [:]
        var lastJSONProgress: [String: ContinuousClock.Instant] = [:]
    }

    private let board: ProgressBoard
    private let json: Bool
    /// Whether placed files' paths go to standard output (not when it carries the file, -o -).
    private let printsPaths: Bool
    private let state = Mutex(State())

    init(total: Int, json: Bool, quiet: Bool, printsPaths: Bool = true) {
        self.json = json
        self.printsPaths = printsPaths
        board = ProgressBoard(total: total, isEnabled: !quiet)
    }

    func added(_ item: GetItem) {
        emit(["event": .string("added"), "url": .string(item.displayURL), "origin": .string(item.origin)])
    }

    func started(_ item: GetItem, name: String, offset: Int64) {
        let slot = state.withLock { state in
            if let slot = state.slots[item.url] { return slot }
            let slot = board.begin(name)
            state.slots[item.url] = slot
            return slot
        }
        if offset > 0 { board.update(slot, TransferProgress(receivedBytes: offset, expectedBytes: nil)) }
    }

    func progress(_ item: GetItem, received: Int64, expected: Int64?) {
        let (slot, jsonDue) = state.withLock { state -> (Int?, Bool) in
            let now = ContinuousClock.now
            let due = state.lastJSONProgress[item.url].map { now - $0 >= .seconds(1) } ?? true
            if due { state.lastJSONProgress[item.url] = now }
            return (state.slots[item.url], due)
        }
        if let slot { board.update(slot, TransferProgress(receivedBytes: received, expectedBytes: expected)) }
        if jsonDue {
            var object: [String: JSONValue] = [
                "event": .string("progress"), "url": .string(item.displayURL), "received": .integer(received),
            ]
            if let expected { object["expected"] = .integer(expected) }
            emit(object)
        }
    }

    func retrying(_ item: GetItem, after: Duration, reason: FailureReason) {
        let seconds = Double(after.components.seconds) + Double(after.components.attoseconds) / 1e18
        board.note("retrying \(item.displayURL) in \(ByteFormat.decimal(seconds, places: 1)) s: \(reason)")
        emit([
            "event": .string("retrying"), "url": .string(item.displayURL), "after": .number(seconds),
            "code": .string(reason.code.rawValue), "message": .string(reason.message),
        ])
    }

    func finished(_ item: GetItem, path: String, size: Int64?, digest: String?) {
        let slot = state.withLock { $0.slots.removeValue(forKey: item.url) }
        let verified = digest.map { ", \($0.split(separator: "=").first ?? "") verified" } ?? ""
        let detail = "\(size.map(ByteFormat.size) ?? "?") → \(path)\(verified)"
        if let slot { board.end(slot, success: detail) } else { board.note("done  \(detail)") }
        var object: [String: JSONValue] = [
            "event": .string("finished"), "url": .string(item.displayURL), "path": .string(path),
        ]
        if let size { object["size"] = .integer(size) }
        if let digest { object["digest"] = .string(digest) }
        result(path, object)
    }

    func alreadyComplete(_ item: GetItem, path: String, size: Int64?, digest: String?) {
        board.note("complete already: \(path)\(digest == nil ? "" : ", checksum verified")")
        var object: [String: JSONValue] = [
            "event": .string("complete"), "url": .string(item.displayURL), "path": .string(path),
        ]
        if let size { object["size"] = .integer(size) }
        if let digest { object["digest"] = .string(digest) }
        result(path, object)
    }

    /// `-N`: the file here is as new as the server's; it is kept and named like a finished one.
    func upToDate(_ item: GetItem, path: String, size: Int64?) {
        board.note("up to date: \(path) (the server's copy is not newer)")
        var object: [String: JSONValue] = [
            "event": .string("complete"), "url": .string(item.displayURL), "path": .string(path),
            "notModified": .bool(true),
        ]
        if let size { object["size"] = .integer(size) }
        result(path, object)
    }

    func skipped(_ item: GetItem, because message: String) {
        let slot = state.withLock { $0.slots.removeValue(forKey: item.url) }
        if let slot { board.end(slot, success: "skipped: \(message)") } else { board.note("skipped  \(message)") }
        emit(["event": .string("skipped"), "url": .string(item.displayURL), "message": .string(message)])
    }

    func failed(_ item: GetItem, code: String, status: Int32, message: String) {
        let slot = state.withLock { $0.slots.removeValue(forKey: item.url) }
        let line = "\(item.displayURL): \(message)"
        if let slot { board.end(slot, failure: line) } else { board.failure(line) }
        emit([
            "event": .string("failed"), "url": .string(item.displayURL), "code": .string(code),
            "status": .integer(Int64(status)), "message": .string(message),
        ])
    }

    func finish() { board.finish() }

    /// A result: its path on standard output, or its JSON object.
    private func result(_ path: String, _ object: [String: JSONValue]) {
        if json {
            emit(object)
        } else if printsPaths {
            board.withLineCleared { writeToStandardOutput(path + "\n") }
        }
    }

    private func emit(_ object: [String: JSONValue]) {
        guard json else { return }
        writeToStandardOutput(JSONValue.object(object).text + "\n")
    }
}

/// The few JSON values the reporter writes, serialized by hand (keys sorted, strings escaped).
enum JSONValue: Sendable {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case object([String: JSONValue])

    var text: String {
        switch self {
        case .string(let value): return Self.quoted(value)
        case .integer(let value): return String(value)
        case .number(let value): return value.isFinite ? String(value) : "null"
        case .bool(let value): return value ? "true" : "false"
        case .object(let members):
            return "{" + members.keys.sorted().map { Self.quoted($0) + ":" + members[$0]!.text }.joined(separator: ",")
                + "}"
        }
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x2028...0x2029).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
