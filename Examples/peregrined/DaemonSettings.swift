import Configuration

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The daemon's options from a configuration file and the environment, read through
/// swift-configuration. The command line wins over the environment, which wins over the file.
///
/// - The file (`--conf-path FILE`, or `PEREGRINE_CONF_PATH`) is in aria2's format: one
///   `name=value` a line, `#` comments, blank lines. A name is one of the daemon's long options
///   without its dashes (`dir=/srv/downloads`; a switch is `rpc-listen-all=true`), or one of
///   aria2's options, which the service applies at its start as `aria2.changeGlobalOption`
///   would (`max-overall-download-limit=2M`, `user-agent=…`). Any other name is refused.
/// - The environment: `PEREGRINE_` and the option's name in capitals, `_` for `-`
///   (`PEREGRINE_RPC_SECRET`, `PEREGRINE_STORE`, `PEREGRINE_MAX_CONCURRENT_DOWNLOADS`), the
///   daemon's options only.
///
/// What the environment and the file give goes in front of the command line, as options, so
/// that ArgumentParser checks every value alike and the command line's own win (the last value
/// of an option is the one taken).
struct DaemonSettings {
    /// The arguments to parse: the settings' options, then the command line.
    var arguments: [String]
    /// aria2 options of the file, for the service to apply.
    var globalOptions: [String: String]
    /// The file read, if any.
    var file: String?
    /// aria2's command-line options of the file that mean nothing here (`enable-rpc`, `daemon`),
    /// for a notice.
    var ignored: [String] = []
    /// Whether the file gives a secret (the RPC secret, the store's URL).
    var fileHoldsSecret = false

    /// A setting that cannot be used: one line, naming its file and line or its variable.
    struct SettingsError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// What an option takes.
    enum Kind {
        case value
        case flag
    }

    /// The daemon's options a setting may give, by long name (`--conf-path` itself comes from the
    /// command line or the environment).
    static let options: [String: Kind] = [
        "dir": .value, "state": .value, "rpc-listen-port": .value, "rpc-secret": .value, "rpc-secret-file": .value,
        "rpc-listen-all": .flag, "rpc-allow-origin-all": .flag, "max-concurrent-downloads": .value, "split": .value,
        "store": .value, "queue": .value, "lease": .value, "fleet-slots": .value, "fleet-max-downloads": .value,
        "fleet-max-connections-per-origin": .value, "drain-timeout": .value, "verbose": .flag, "log-format": .value,
    ]

    /// aria2's options of its command line alone, common in its configuration files, that the
    /// service has no use for: it always serves JSON-RPC and never forks.
    static let aria2CommandLineOnly: Set<String> = ["enable-rpc", "daemon", "conf-path", "no-conf"]

    /// Options whose values are secrets (swift-configuration redacts them).
    static let secrets: Set<String> = ["rpc-secret", "store"]

    /// Options that exclude each other: only the first source giving one of them counts.
    static let exclusive: [[String]] = [["rpc-secret", "rpc-secret-file"]]

    /// The environment variable of an option.
    static func variable(_ name: String) -> String {
        "PEREGRINE_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// The settings for `commandLine` (without the program's name).
    static func read(
        commandLine: [String], environment: [String: String], isAria2Option: (String) -> Bool
    ) throws(SettingsError) -> DaemonSettings {
        let given = givenOptions(commandLine)
        let path =
            value(of: "conf-path", in: commandLine)
            ?? environment[variable("conf-path")].flatMap {
                $0.isEmpty ? nil : $0
            }
        var fileValues: [String: String] = [:]
        var globalOptions: [String: String] = [:]
        var ignored: [String] = []
        if let path {
            (fileValues, globalOptions, ignored) = try parse(file: path, isAria2Option: isAria2Option)
        }
        let environmentProvider = EnvironmentVariablesProvider(
            environmentVariables: environment, secretsSpecifier: .specific(Set(secrets.map(variable))))
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (name, value) in fileValues {
            values[AbsoluteConfigKey(["peregrine", name])] = ConfigValue(
                .string(value), isSecret: secrets.contains(name))
        }
        let reader = ConfigReader(providers: [
            environmentProvider, InMemoryProvider(name: path ?? "configuration file", values: values),
        ])

        var skipped = given
        for group in exclusive where group.contains(where: given.contains) { skipped.formUnion(group) }
        // Of a group the command line leaves open, the environment's members win over the file's.
        for group in exclusive where !group.contains(where: given.contains) {
            let fromEnvironment = group.filter { environment[variable($0)] != nil }
            if !fromEnvironment.isEmpty { skipped.formUnion(group.filter { !fromEnvironment.contains($0) }) }
        }

        var arguments: [String] = []
        for (name, kind) in options.sorted(by: { $0.key < $1.key }) where !skipped.contains(name) {
            guard let value = reader.string(forKey: ConfigKey(["peregrine", name]), isSecret: secrets.contains(name))
            else { continue }
            switch kind {
            case .value:
                arguments.append("--\(name)=\(value)")
            case .flag:
                switch value {
                case "true": arguments.append("--\(name)")
                case "false": break
                default:
                    let source = environment[variable(name)] != nil ? variable(name) : "\(name) in \(path ?? "")"
                    throw SettingsError("\(source) takes true or false, not '\(value)'")
                }
            }
        }
        return DaemonSettings(
            arguments: arguments + commandLine, globalOptions: globalOptions, file: path, ignored: ignored,
            fileHoldsSecret: !secrets.isDisjoint(with: fileValues.keys))
    }

    /// The daemon's options named on the command line (`--name`, `--name=value`, `-s`).
    private static func givenOptions(_ commandLine: [String]) -> Set<String> {
        var given: Set<String> = []
        for argument in commandLine {
            if argument == "--" { break }
            if argument == "-s" || argument.hasPrefix("-s") && !argument.hasPrefix("--") {
                given.insert("split")
            } else if argument.hasPrefix("--") {
                let name = argument.dropFirst(2).split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                given.insert(name)
            }
        }
        return given
    }

    /// The value of `--name VALUE` or `--name=VALUE` on the command line.
    private static func value(of name: String, in commandLine: [String]) -> String? {
        var found: String?
        var index = 0
        while index < commandLine.count {
            let argument = commandLine[index]
            if argument == "--" { break }
            if argument == "--\(name)", index + 1 < commandLine.count {
                found = commandLine[index + 1]
                index += 1
            } else if argument.hasPrefix("--\(name)=") {
                found = String(argument.dropFirst(name.count + 3))
            }
            index += 1
        }
        return found
    }

    /// The daemon's options and aria2's options of a file in aria2's format.
    static func parse(file path: String, isAria2Option: (String) -> Bool) throws(SettingsError)
        -> (options: [String: String], aria2: [String: String], ignored: [String])
    {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SettingsError("cannot read the configuration file \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SettingsError("\(path) is not UTF-8 text")
        }
        var options: [String: String] = [:]
        var aria2: [String: String] = [:]
        var ignored: [String] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw SettingsError("\(path):\(number + 1): expected name=value, not '\(line)'")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if Self.options[name] != nil {
                options[name] = value
            } else if isAria2Option(name) {
                aria2[name] = value
            } else if aria2CommandLineOnly.contains(name) {
                ignored.append(name)
            } else {
                throw SettingsError("\(path):\(number + 1): unknown option '\(name)'")
            }
        }
        return (options, aria2, ignored)
    }
}
