import Peregrine

/// The aria2 options of one download (and the service's defaults for new downloads): what
/// `addUri`, `changeOption` and `changeGlobalOption` take, validated, and what `getOption`
/// reports back. Values are strings, as aria2 has them.
///
/// Every option aria2 takes is taken, with aria2's checks (the service's catalogue of them): a name
/// aria2 does not know is ignored, as aria2 ignores it; a value aria2 would refuse is refused
/// with aria2's error. The service acts on: `dir` (the download root only), `out`, `checksum`,
/// `header`, `user-agent`, `referer`, `pause`, `gid`, `split` and `max-connection-per-server`
/// (the lower of the two is the download's connection count; a change restarts an active
/// transfer from what it has), `max-download-limit` (the task's speed limit, saved with it; a
/// change applies to a running download at once), `timeout`, `connect-timeout`,
/// `lowest-speed-limit`, `max-tries`, `retry-wait`, `http-user`/`http-passwd`, `all-proxy`,
/// `check-certificate`, `ca-certificate`, and globally `max-concurrent-downloads` and
/// `max-overall-download-limit` (the manager's speed limit, shared by every transfer). The
/// others are kept and reported. Speeds and sizes are aria2's: a byte count with an optional
/// `K` or `M` (×1024), reported in bytes; `0` is unlimited.
public struct DownloadOptions: Sendable, Hashable {
    /// The option values by aria2 name; `header` holds its lines joined by newlines.
    public var values: [String: String] = [:]

    /// Creates an empty set.
    public init(_ values: [String: String] = [:]) { self.values = values }

    /// Options `addUri` takes: every option of a download, and `gid` and `pause`.
    static let perDownload: Set<String> = Set(
        Aria2Option.catalogue.values.filter(\.perDownload).map(\.name)
    ).union(Aria2Option.addOnly)
    /// Options `changeOption` takes (it acts on the connections, the speed limit and the
    /// request options). Not `gid` and `pause`, which aria2 ignores there, nor `out`: a
    /// download's name is chosen when it is added.
    static let changeable: Set<String> = perDownload.subtracting(Aria2Option.addOnly).subtracting(["out"])
    /// Options `changeGlobalOption` takes: all of aria2's (those of a download become the
    /// defaults of new downloads; a running service's listening, say, is not changed, as in
    /// aria2).
    static let global: Set<String> = Set(Aria2Option.catalogue.keys)

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
        case "header":
            // aria2 reports the lines with a newline after each; either form is taken.
            let lines = value.split(separator: "\n", omittingEmptySubsequences: true)
            for line in lines {
                guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                    line[..<colon].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }),
                    !line.utf8.contains(where: { $0 == 0x0D || $0 == 0 })
                else { throw RPCError.badOption(name, "not a 'Name: value' header") }
            }
            return lines.joined(separator: "\n")
        case "checksum":
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex,
                value.index(after: equals) != value.endIndex
            else { throw RPCError.badOption(name, "must be TYPE=DIGEST") }
            return value
        case "user-agent", "referer", "http-user", "http-passwd":
            // Sent in a header: no line breaks.
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw RPCError.badOption(name, "holds a line break")
            }
            return value
        case "all-proxy":
            guard value.isEmpty || Self.proxyURL(value) != nil else {
                throw RPCError.badOption(name, "must be [http://]HOST[:PORT]")
            }
            // Credentials in the URL would be stored with the options: they have options of
            // their own, whose password is kept in memory only.
            guard !value.contains("@") else {
                throw RPCError.badOption(name, "give the proxy's credentials as all-proxy-user and all-proxy-passwd")
            }
            return value
        case "max-download-limit", "max-overall-download-limit":
            let bytes = try Aria2Option.catalogue[name]?.normalize(value) ?? value
            guard let number = Int64(bytes), number <= SpeedLimit.maximum else {
                throw RPCError.badOption(name, "must be a byte count, with K or M allowed")
            }
            return bytes
        default:
            guard let option = Aria2Option.catalogue[name] else { return value }
            return try option.normalize(value)
        }
    }

    /// A proxy as libcurl takes it (`http://` added when no scheme is given), or nil when it is
    /// no host with an optional port.
    static func proxyURL(_ value: String) -> String? {
        let full = value.contains("://") ? value : "http://" + value
        guard full.hasPrefix("http://") || full.hasPrefix("https://"),
            let url = try? DownloadURL(full), !url.host.isEmpty
        else { return nil }
        return full
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

    /// The stored form, as meta info: without secrets (`http-passwd`…), which stay in memory
    /// only, so that a store never holds them in the clear.
    var metaInfo: PropertyListValue {
        .dictionary(values.filter { !Aria2Option.isSecret($0.key) }.mapValues { .string($0) })
    }

    /// The stored form, as JSON.
    var json: JSONValue { .object(JSONObject(values.mapValues { .string($0) })) }
}
