#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The credentials of a `.netrc` file (the format of ftp(1), which curl `-n`, wget and aria2c
/// read): `machine HOST login NAME password SECRET`, a `default` entry for every other host,
/// `account` ignored, `macdef` bodies skipped up to their empty line. Values may be quoted
/// (`"a b"`, with `\"` and `\\`).
struct Netrc: Sendable {
    struct Entry: Sendable, Equatable {
        var login: String
        var password: String
    }

    /// Why a file cannot be used; never quotes a password.
    struct ParseError: Error, CustomStringConvertible {
        var line: Int
        var problem: String
        var description: String { "line \(line): \(problem)" }
    }

    private(set) var machines: [String: Entry] = [:]
    private(set) var fallback: Entry?

    /// The entry for `host` (compared without case), else the `default` one.
    func entry(for host: String) -> Entry? {
        machines[host.lowercased()] ?? fallback
    }

    init(parsing text: String) throws(ParseError) {
        var tokens = Tokenizer(text)
        // The entry being read: its host (nil for `default`) and what it has so far.
        var current: (host: String?, login: String?, password: String?)?
        func close() {
            guard let entry = current else { return }
            current = nil
            guard let login = entry.login, let password = entry.password else { return }
            if let host = entry.host {
                // The first entry of a host wins, as in curl.
                if machines[host] == nil { machines[host] = Entry(login: login, password: password) }
            } else if fallback == nil {
                fallback = Entry(login: login, password: password)
            }
        }
        while let (token, line) = try tokens.next() {
            switch token {
            case "machine":
                close()
                guard let (host, _) = try tokens.next() else {
                    throw ParseError(line: line, problem: "machine without a host name")
                }
                current = (host.lowercased(), nil, nil)
            case "default":
                close()
                current = (nil, nil, nil)
            case "login", "password", "account":
                guard let (value, _) = try tokens.next() else {
                    throw ParseError(line: line, problem: "\(token) without a value")
                }
                guard current != nil else {
                    throw ParseError(line: line, problem: "\(token) outside a machine or default entry")
                }
                if token == "login" { current?.login = value }
                if token == "password" { current?.password = value }
            case "macdef":
                close()
                tokens.skipMacro()
            default:
                throw ParseError(line: line, problem: "unknown word \(token.prefix(40).debugDescription)")
            }
        }
        close()
    }

    /// Words of a netrc file, with the line each starts on.
    private struct Tokenizer {
        private let bytes: [UInt8]
        private var index = 0
        private var line = 1

        init(_ text: String) { bytes = Array(text.utf8) }

        mutating func next() throws(ParseError) -> (String, Int)? {
            while index < bytes.count, Self.isSpace(bytes[index]) {
                if bytes[index] == UInt8(ascii: "\n") { line += 1 }
                index += 1
            }
            guard index < bytes.count else { return nil }
            let start = line
            if bytes[index] == UInt8(ascii: "#") {
                // A comment, to the end of the line.
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                return try next()
            }
            var word: [UInt8] = []
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while true {
                    guard index < bytes.count, bytes[index] != UInt8(ascii: "\n") else {
                        throw ParseError(line: start, problem: "a quoted value without its closing quote")
                    }
                    let byte = bytes[index]
                    index += 1
                    if byte == UInt8(ascii: "\"") { break }
                    if byte == UInt8(ascii: "\\"), index < bytes.count {
                        word.append(bytes[index])
                        index += 1
                    } else {
                        word.append(byte)
                    }
                }
            } else {
                while index < bytes.count, !Self.isSpace(bytes[index]) {
                    word.append(bytes[index])
                    index += 1
                }
            }
            return (String(decoding: word, as: UTF8.self), start)
        }

        /// Skips a `macdef` name and body: everything up to an empty line.
        mutating func skipMacro() {
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "\n") {
                    line += 1
                    index += 1
                    if index < bytes.count, bytes[index] == UInt8(ascii: "\n") { return }
                } else {
                    index += 1
                }
            }
        }

        private static func isSpace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
                || byte == UInt8(ascii: "\r")
        }
    }
}
