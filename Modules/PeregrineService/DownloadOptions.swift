import Peregrine

/// The aria2 options of one download (and the service's defaults for new downloads): what
/// `addUri`, `changeOption` and `changeGlobalOption` take, validated, and what `getOption`
/// reports back. Values are strings, as aria2 has them.
///
/// Honoured: `dir` (the download root only), `out`, `checksum`, `header`, `pause`,
/// `split` and `max-connection-per-server` (the lower of the two is the download's connection
/// count; a change restarts an active transfer from what it has), `max-download-limit` (the
/// task's speed limit, saved with it; a change applies to a running download at once), and
/// globally `max-concurrent-downloads` and `max-overall-download-limit` (the manager's
/// speed limit, shared by every transfer). Speeds are aria2's: a byte count with an optional
/// `K` or `M` (×1024); `0` is unlimited.
public struct DownloadOptions: Sendable, Hashable {
    /// The option values by aria2 name; `header` holds its lines joined by newlines.
    public var values: [String: String] = [:]

    /// Creates an empty set.
    public init(_ values: [String: String] = [:]) { self.values = values }

    /// Options `addUri` takes.
    static let perDownload: Set<String> = [
        "dir", "out", "checksum", "split", "max-connection-per-server", "max-download-limit", "header", "pause",
    ]
    /// Options `changeOption` can change on an existing download.
    static let changeable: Set<String> = ["split", "max-connection-per-server", "max-download-limit"]
    /// Options `changeGlobalOption` takes.
    static let global: Set<String> = [
        "max-concurrent-downloads", "max-overall-download-limit", "split", "max-connection-per-server",
        "max-download-limit",
    ]

    /// Reads an options object of a request, keeping only `allowed` names.
    ///
    /// Unknown option names are ignored, as aria2 ignores options it does not know in RPC;
    /// a value of a known option that aria2 would refuse is an error.
    static func parse(_ value: JSONValue?, allowed: Set<String>, position: Int) throws(RPCError) -> DownloadOptions {
        guard let value else { return DownloadOptions() }
        guard case .object(let members) = value else { throw RPCError.wrongType(at: position) }
        var options = DownloadOptions()
        for (name, raw) in members where allowed.contains(name) {
            let text: String
            switch raw {
            case .string(let string): text = string
            case .integer(let number): text = String(number)
            case .bool(let flag): text = flag ? "true" : "false"
            case .array(let items) where name == "header":
                var lines: [String] = []
                for item in items {
                    guard case .string(let line) = item else { throw RPCError.badOption(name, "not a string") }
                    lines.append(line)
                }
                text = lines.joined(separator: "\n")
            default: throw RPCError.badOption(name, "not a string")
            }
            options.values[name] = try validate(name, text)
        }
        return options
    }

    /// Checks one value; returns it normalised.
    static func validate(_ name: String, _ value: String) throws(RPCError) -> String {
        switch name {
        case "split", "max-concurrent-downloads":
            guard let number = Int(value), number >= 1, number <= 16 * 1024 else {
                throw RPCError.badOption(name, "must be a number from 1")
            }
            return String(number)
        case "max-connection-per-server":
            guard let number = Int(value), (1...16).contains(number) else {
                throw RPCError.badOption(name, "must be a number from 1 to 16")
            }
            return String(number)
        case "max-download-limit", "max-overall-download-limit":
            guard let bytes = parseSpeed(value), bytes <= SpeedLimit.maximum else {
                throw RPCError.badOption(name, "must be a byte count, with K or M allowed")
            }
            return String(bytes)
        case "pause":
            guard value == "true" || value == "false" else { throw RPCError.badOption(name, "must be true or false") }
            return value
        case "header":
            for line in value.split(separator: "\n", omittingEmptySubsequences: false) {
                guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                    line[..<colon].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }),
                    !line.utf8.contains(where: { $0 == 0x0D || $0 == 0 })
                else { throw RPCError.badOption(name, "not a 'Name: value' header") }
            }
            return value
        case "checksum":
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex,
                value.index(after: equals) != value.endIndex
            else { throw RPCError.badOption(name, "must be TYPE=DIGEST") }
            return value
        default:
            return value
        }
    }

    /// aria2's speed syntax: a byte count with an optional `K` or `M` (×1024) suffix.
    static func parseSpeed(_ text: String) -> Int64? {
        var digits = Substring(text)
        var factor: Int64 = 1
        if let last = digits.last, "kKmM".contains(last) {
            factor = "kK".contains(last) ? 1024 : 1024 * 1024
            digits = digits.dropLast()
        }
        guard let number = Int64(digits), number >= 0, number <= Int64.max / factor else { return nil }
        return number * factor
    }

    /// The speed limit of a validated speed value (a byte count); nil for `0` (unlimited) or none.
    static func speedLimit(_ value: String?) -> SpeedLimit? {
        value.flatMap { Int64($0) }.flatMap { try? SpeedLimit(bytesPerSecond: $0) }
    }

    /// The request headers of `header`, as name/value pairs.
    var headerFields: [(String, String)] {
        guard let text = values["header"], !text.isEmpty else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            return (name, String(value))
        }
    }

    /// The stored form, as JSON.
    var json: JSONValue { .object(JSONObject(values.mapValues { .string($0) })) }
}
