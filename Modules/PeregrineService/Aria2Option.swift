/// One of aria2's options as the service knows it: its name, the values aria2 takes, aria2's
/// default and whether it belongs to a download (``catalogue``, generated from aria2c by
/// `Scripts/aria2-options.py`).
///
/// The service takes every option aria2 takes, with aria2's checks, so that a client's
/// `addUri` or `changeGlobalOption` is refused exactly where aria2 refuses it; an option the
/// service does not act on is kept and reported back by `getOption`, as aria2 does (see
/// ``DownloadOptions`` for those it acts on).
struct Aria2Option: Sendable {
    /// What values an option takes.
    enum Values: Sendable {
        /// `true` or `false`.
        case boolean
        /// A whole number from the lower bound to the upper one (nil: no upper bound).
        case integer(Int64, Int64?)
        /// A byte count with an optional `K` or `M` suffix (×1024), within the bounds; reported
        /// as bytes.
        case size(Int64, Int64?)
        /// A decimal number from the lower bound.
        case decimal(Double)
        /// One of these words.
        case choice([String])
        /// Text aria2 does not check (paths, URIs, names).
        case text
    }

    let name: String
    let values: Values
    /// aria2's default, as its `getGlobalOption` reports it; nil when aria2 has none.
    let aria2Default: String?
    /// Whether it is an option of one download: `getOption` reports it, `addUri` and
    /// `changeOption` take it.
    let perDownload: Bool

    init(_ name: String, _ values: Values, default aria2Default: String?, perDownload: Bool) {
        self.name = name
        self.values = values
        self.aria2Default = aria2Default
        self.perDownload = perDownload
    }

    /// Options `addUri` takes that `getOption` does not report (aria2's input-file options
    /// without a value of the download's).
    static let addOnly: Set<String> = ["gid", "pause"]

    /// Options whose values are secrets: taken, never reported, logged or stored.
    static func isSecret(_ name: String) -> Bool {
        name.hasSuffix("-passwd") || name == "rpc-secret"
    }

    /// `value` checked as aria2 checks it, in the form aria2 reports it (sizes in bytes).
    ///
    /// - Throws: aria2's error for the option when aria2 would refuse the value.
    func normalize(_ value: String) throws(RPCError) -> String {
        switch values {
        case .boolean:
            guard value == "true" || value == "false" else { throw RPCError.badOption(name, "must be true or false") }
            return value
        case .integer(let lower, let upper):
            guard let number = Int64(value), number >= lower, upper.map({ number <= $0 }) ?? true else {
                throw RPCError.badOption(name, "must be a number \(Self.range(lower, upper))")
            }
            return String(number)
        case .size(let lower, let upper):
            guard let bytes = DownloadOptions.parseSpeed(value), bytes >= lower, upper.map({ bytes <= $0 }) ?? true
            else {
                let bounds = lower == 0 && upper == nil ? "" : " " + Self.range(lower, upper)
                throw RPCError.badOption(name, "must be a byte count\(bounds), with K or M allowed")
            }
            return String(bytes)
        case .decimal(let lower):
            guard let number = Double(value), number.isFinite, number >= lower else {
                throw RPCError.badOption(name, "must be a number from \(lower)")
            }
            return value
        case .choice(let words):
            guard words.contains(value) else {
                throw RPCError.badOption(name, "must be one of \(words.joined(separator: ", "))")
            }
            return value
        case .text:
            guard !value.utf8.contains(where: { $0 == 0 }) else { throw RPCError.badOption(name, "holds a NUL byte") }
            return value
        }
    }

    private static func range(_ lower: Int64, _ upper: Int64?) -> String {
        upper.map { "from \(lower) to \($0)" } ?? "from \(lower)"
    }
}
