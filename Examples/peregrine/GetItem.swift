import PeregrineAuth
import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One download `peregrine get` was asked for, from the command line or an input file.
struct GetItem: Sendable {
    /// Where it was given, for messages: `URL 2`, `list.txt:7`.
    var origin: String
    /// The URL as given with any password replaced by `***`: the only form ever printed.
    var displayURL: String
    /// The URL without its user information: the task's key, what is stored.
    var url: String
    /// Credentials that came inside the URL (`http://user:secret@host/…`).
    var credential: Credential?
    /// `checksum=` of an input line, or the matching `--checksum`.
    var checksum: String?
    /// `out=` of an input line, or `-O`.
    var outputName: String?
    /// A checksum file to read the digest from (`--checksum-url`).
    var checksumURL: String?
    /// Other URLs of the same file (`--mirror`, or further URLs on an input line), without
    /// their user information.
    var mirrors: [String] = []
    /// Credentials that came inside the mirrors' URLs, by the mirror's stripped URL.
    var mirrorCredentials: [String: Credential] = [:]
    /// `dir=` of an input file's option line: the directory this file goes to instead of `-d`.
    var directory: String?
    /// `header=`, `referer=` and `user-agent=` of an input file's option lines, sent with this
    /// download's requests after (and instead of same-named) `--header`s.
    var headers: [(name: String, value: String)] = []
    /// Why the item cannot be downloaded at all (a malformed URL or line); reported with the
    /// other failures, never aborting the batch.
    var problem: String?
}

/// Reading the items: URLs with credentials taken out, input files with their options.
enum GetInput {
    /// An item from a URL string: credentials in it are taken out of the URL and kept apart;
    /// a URL that cannot be downloaded becomes an item with a ``GetItem/problem``.
    static func item(_ raw: String, origin: String, checksum: String? = nil, outputName: String? = nil) -> GetItem {
        let (stripped, credential) = takeCredentials(from: raw)
        var item = GetItem(
            origin: origin, displayURL: redacted(raw), url: stripped, credential: credential, checksum: checksum,
            outputName: outputName)
        do {
            _ = try DownloadURL(stripped)
        } catch {
            // The stripped string carries no password, so the message is safe to print.
            item.problem = "\(error)"
        }
        return item
    }

    /// Adds mirrors to an item, their credentials taken out like the URL's; a mirror that
    /// cannot be downloaded makes the item's problem.
    static func addMirrors(_ raws: [String], to item: inout GetItem) {
        for raw in raws {
            let (stripped, credential) = takeCredentials(from: raw)
            do {
                _ = try DownloadURL(stripped)
            } catch {
                if item.problem == nil { item.problem = "\(item.origin): mirror \(error)" }
                continue
            }
            item.mirrors.append(stripped)
            if let credential { item.mirrorCredentials[stripped] = credential }
        }
    }

    /// The URL without `user[:password]@`, and the credential it held.
    static func takeCredentials(from raw: String) -> (url: String, credential: Credential?) {
        URLUserInformation.split(raw)
    }

    /// `raw` with the password of its user information replaced by `***`.
    static func redacted(_ raw: String) -> String { URLUserInformation.redacted(raw) }

    /// The largest input file read: a list of a million URLs fits many times over.
    static let inputFileLimit = 256 << 20

    /// The bytes of the file at `path`, read to its end: a regular file, or a pipe or FIFO that
    /// another process writes, as `-i <(…)` gives (`/dev/fd/63`), whose size is not known ahead.
    static func readAll(_ path: String) throws(GetUsageError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw GetUsageError("--input-file \(path): cannot open it: \(errorText(errno))") }
        defer { _ = close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw GetUsageError("--input-file \(path): cannot read it: \(errorText(errno))")
            }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= inputFileLimit else {
                throw GetUsageError("--input-file \(path): larger than \(inputFileLimit >> 20) MiB")
            }
        }
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// The items of an input file (`-` for standard input), as aria2 reads them: a line of URLs
    /// of one file (the first, then its mirrors, separated by tabs or blanks, optionally with
    /// `checksum=ALGORITHM=HEX` and `out=NAME`), followed by indented option lines for it
    /// (`  out=NAME`, `  dir=DIR`, `  checksum=sha-256=HEX`, `  header=NAME: VALUE`,
    /// `  referer=URL`, `  user-agent=TEXT`). Blank lines and lines starting with `#` are
    /// skipped. An option this command does not read fails its file with a message naming it.
    ///
    /// - Throws: a message naming the file when it cannot be read, or an option line that
    ///   follows no URL.
    static func items(inputFile path: String) throws(GetUsageError) -> [GetItem] {
        let text: String
        if path == "-" {
            var data = Data()
            while let line = readLine(strippingNewline: false) { data.append(contentsOf: line.utf8) }
            text = String(decoding: data, as: UTF8.self)
        } else {
            text = String(decoding: try readAll(path), as: UTF8.self)
        }
        return try items(text: text, name: path == "-" ? "standard input" : path)
    }

    /// The items of an input file's text; `name` names the file in messages.
    static func items(text: String, name: String) throws(GetUsageError) -> [GetItem] {
        var items: [GetItem] = []
        // "\r\n" is one Character in Swift: split on it too, or a Windows file is one line.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, line) in lines.enumerated() {
            let origin = "\(name):\(index + 1)"
            let isOptionLine = line.first == " " || line.first == "\t"
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            if isOptionLine {
                guard !items.isEmpty else {
                    throw GetUsageError("--input-file \(origin): an option line before any URL")
                }
                applyOption(line, origin: origin, to: &items[items.count - 1])
                continue
            }
            var checksum: String?
            var out: String?
            var problem: String?
            var mirrors: [String] = []
            for field in fields.dropFirst() {
                if field.contains("://") {
                    mirrors.append(String(field))
                } else if field.hasPrefix("checksum=") {
                    checksum = String(field.dropFirst("checksum=".count))
                } else if field.hasPrefix("out=") {
                    out = String(field.dropFirst("out=".count))
                } else {
                    problem =
                        "\(origin): unknown option \(field.prefix(40)) (mirror URLs, checksum=… and out=… are read)"
                }
            }
            var item = item(String(first), origin: origin, checksum: checksum, outputName: out)
            addMirrors(mirrors, to: &item)
            if let problem { item.problem = problem }
            items.append(item)
        }
        return items
    }

    /// The options an input file's indented lines may set.
    static let optionNames = ["out", "dir", "checksum", "header", "referer", "user-agent"]

    /// Applies an indented `NAME=VALUE` line to the item above it; the value is the rest of the
    /// line (a header's value may hold blanks). A line that cannot apply fails the item.
    private static func applyOption(_ line: Substring, origin: String, to item: inout GetItem) {
        let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
        let text = trimmed.hasSuffix("\r") ? trimmed.dropLast() : trimmed
        func fail(_ message: String) { if item.problem == nil { item.problem = "\(origin): \(message)" } }
        guard let equals = text.firstIndex(of: "=") else {
            fail("\(text.prefix(40)) is not NAME=VALUE")
            return
        }
        let name = String(text[..<equals])
        let value = String(text[text.index(after: equals)...])
        switch name {
        case "out": item.outputName = value
        case "dir":
            guard !value.isEmpty, !value.contains("\0") else { return fail("dir= needs a directory") }
            item.directory = value
        case "checksum": item.checksum = value
        case "header":
            guard let header = parseHeader(value) else {
                return fail("header=\(value.prefix(60)) is not NAME: VALUE")
            }
            item.headers.append(header)
        case "referer", "user-agent":
            guard !value.contains(where: { $0 == "\r" || $0 == "\n" }) else { return fail("\(name)= is not one line") }
            item.headers.append((name == "referer" ? "Referer" : "User-Agent", value))
        default:
            fail(
                "unknown option \(name.prefix(40))= (\(optionNames.map { $0 + "=" }.joined(separator: ", ")) are read)")
        }
    }

    /// `NAME: VALUE` as `--header` takes it: a name without blanks, on one line.
    static func parseHeader(_ text: String) -> (name: String, value: String)? {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex,
            !text[..<colon].contains(where: { $0 == " " || $0 == "\t" }),
            !text.contains(where: { $0 == "\r" || $0 == "\n" })
        else { return nil }
        return (
            String(text[..<colon]), String(text[text.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" }))
        )
    }
}

/// A rate like curl's `--limit-rate`: bytes per second, with an optional `k`, `m` or `g`
/// suffix (binary multiples, as curl and wget read them).
enum RateParser {
    static func bytesPerSecond(_ text: String) -> Int64? {
        var digits = text.lowercased()
        var multiplier: Int64 = 1
        if let last = digits.last, let factor = ["k": Int64(1) << 10, "m": 1 << 20, "g": 1 << 30][String(last)] {
            multiplier = factor
            digits.removeLast()
        }
        guard let value = Double(digits), value.isFinite, value > 0, value * Double(multiplier) < 1e15 else {
            return nil
        }
        let rate = Int64(value * Double(multiplier))
        return rate >= 1 ? rate : nil
    }
}

/// A bad flag value or unreadable input: printed as one line naming the flag, exit status 64.
struct GetUsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
