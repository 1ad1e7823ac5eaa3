import PeregrineCore
import PeregrineStorage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a ``PostgresTaskStore`` keeps its data: a server, a user and a database, parsed from a
/// connection string.
///
/// ```
/// postgresql://user:password@db.example:5432/peregrine
/// postgresql://user@/peregrine?host=/run/postgresql      (a unix socket directory)
/// postgres://user:password@127.0.0.1/peregrine?connect_timeout=5
/// ```
///
/// The user name, password and database are percent-decoded. Query parameters: `host` (a
/// socket directory when it starts with `/`, else a host name), `port`, `user`, `password`,
/// `dbname`, `connect_timeout` (seconds, default 10) and `application_name`; `sslmode` may only
/// be `disable` or absent, as this store speaks plain TCP or a unix socket. Any other
/// parameter is refused, so that a typo is not silently ignored.
///
/// ``description`` (and every message of the store) shows the string with the password
/// replaced by `***`: print it, log it, never the original.
public struct PostgresStoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// How the server is reached.
    public enum Endpoint: Sendable, Hashable {
        /// A TCP host name or address, and a port.
        case tcp(host: String, port: Int)
        /// A unix socket directory (the server's `unix_socket_directories`) and the port that
        /// names the socket file in it (`.s.PGSQL.<port>`).
        case unixSocket(directory: String, port: Int)
    }

    /// How the server is reached.
    public var endpoint: Endpoint
    /// The user to log in as.
    public var username: String
    /// The password, when the server asks for one. Never printed.
    public var password: String?
    /// The database; the user's name when nil, as libpq does.
    public var database: String?
    /// How long a connection attempt may take.
    public var connectTimeout: Duration
    /// The `application_name` the server shows in `pg_stat_activity`.
    public var applicationName: String

    /// A location from its parts.
    public init(
        endpoint: Endpoint, username: String, password: String? = nil, database: String? = nil,
        connectTimeout: Duration = .seconds(10), applicationName: String = "peregrine"
    ) {
        self.endpoint = endpoint
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.applicationName = applicationName
    }

    /// Parses a `postgresql://` (or `postgres://`) connection string.
    ///
    /// - Throws: `StoreError.Code.invalidConfiguration`, whose message shows the string with
    ///   its password redacted, for another scheme, a port outside 1…65535, a bad percent
    ///   escape, an unknown parameter or a missing user name.
    public init(parsing string: String) throws(StoreError) {
        let redacted = Self.redact(string)
        func invalid(_ why: String) -> StoreError {
            StoreError(.invalidConfiguration, path: redacted, "not a usable PostgreSQL connection string: \(why)")
        }
        var rest = Substring(string)
        if rest.hasPrefix("postgresql://") {
            rest = rest.dropFirst("postgresql://".count)
        } else if rest.hasPrefix("postgres://") {
            rest = rest.dropFirst("postgres://".count)
        } else {
            throw invalid("it must start with postgresql://")
        }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var userInfo: Substring = ""
        if let at = rest.lastIndex(of: "@") {
            userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
        }

        var username: String?
        var password: String?
        if !userInfo.isEmpty {
            let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let user = Self.percentDecoded(parts[0]) else { throw invalid("a bad percent escape in the user") }
            username = user.isEmpty ? nil : user
            if parts.count == 2 {
                guard let secret = Self.percentDecoded(parts[1]) else {
                    throw invalid("a bad percent escape in the password")
                }
                password = secret
            }
        }

        var host: String?
        var port = 5432
        if !rest.isEmpty {
            var hostPart = rest
            var portPart: Substring?
            if hostPart.hasPrefix("[") {
                guard let close = hostPart.firstIndex(of: "]") else { throw invalid("an unclosed [ in the host") }
                let after = hostPart[hostPart.index(after: close)...]
                hostPart = hostPart[hostPart.index(after: hostPart.startIndex)..<close]
                if after.hasPrefix(":") { portPart = after.dropFirst() }
            } else if let colon = hostPart.lastIndex(of: ":") {
                portPart = hostPart[hostPart.index(after: colon)...]
                hostPart = hostPart[..<colon]
            }
            guard let decoded = Self.percentDecoded(hostPart) else { throw invalid("a bad percent escape in the host") }
            if !decoded.isEmpty { host = decoded }
            if let portPart {
                guard let number = Int(portPart), (1...65_535).contains(number) else {
                    throw invalid("the port \(portPart) is not a number in 1…65535")
                }
                port = number
            }
        }
        var database: String?
        if !path.isEmpty {
            guard let decoded = Self.percentDecoded(path) else { throw invalid("a bad percent escape in the database") }
            database = decoded
        }

        var connectTimeout = Duration.seconds(10)
        var applicationName = "peregrine"
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0])
            guard parts.count == 2, let value = Self.percentDecoded(parts[1]) else {
                throw invalid("the parameter \(key) has no value or a bad percent escape")
            }
            switch key {
            case "host": host = value
            case "port":
                guard let number = Int(value), (1...65_535).contains(number) else {
                    throw invalid("the port \(value) is not a number in 1…65535")
                }
                port = number
            case "user": username = value
            case "password": password = value
            case "dbname": database = value
            case "connect_timeout":
                guard let seconds = Int(value), seconds > 0 else {
                    throw invalid("connect_timeout \(value) is not a positive number of seconds")
                }
                connectTimeout = .seconds(seconds)
            case "application_name": applicationName = value
            case "sslmode":
                guard value == "disable" else {
                    throw invalid(
                        "sslmode=\(value) is not supported: this store connects without TLS (sslmode=disable)")
                }
            default:
                throw invalid("unknown parameter \(key)")
            }
        }
        guard let username, !username.isEmpty else { throw invalid("no user name (postgresql://USER@host/db)") }
        let endpoint: Endpoint
        if let host, host.hasPrefix("/") {
            endpoint = .unixSocket(directory: host, port: port)
        } else {
            endpoint = .tcp(host: host ?? "localhost", port: port)
        }
        self.init(
            endpoint: endpoint, username: username, password: password, database: database,
            connectTimeout: connectTimeout, applicationName: applicationName)
    }

    /// The location as a connection string, with the password shown as `***`.
    public var description: String {
        var text = "postgresql://" + Self.percentEncoded(username)
        if password != nil { text += ":***" }
        text += "@"
        var parameters: [String] = []
        switch endpoint {
        case .tcp(let host, let port):
            text += host.contains(":") ? "[\(host)]" : Self.percentEncoded(host)
            text += ":\(port)"
        case .unixSocket(let directory, let port):
            parameters.append("host=\(Self.percentEncoded(directory))")
            if port != 5432 { parameters.append("port=\(port)") }
        }
        text += "/" + Self.percentEncoded(database ?? username)
        return parameters.isEmpty ? text : text + "?" + parameters.joined(separator: "&")
    }

    /// A connection string with any password in it — between `user:` and `@`, or a `password=`
    /// parameter — replaced by `***`; for messages about a string that may not even parse.
    public static func redact(_ string: String) -> String {
        var text = string
        if let scheme = text.range(of: "://") {
            let authorityEnd = text[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? text.endIndex
            let authority = text[scheme.upperBound..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            }
        }
        if let mark = text.firstIndex(of: "?") {
            let query = text[text.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false).map {
                $0.hasPrefix("password=") ? "password=***" : String($0)
            }
            text = String(text[...mark]) + query.joined(separator: "&")
        }
        return text
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A part of the connection string, `/` kept (a socket directory).
    private static func percentEncoded(_ text: String) -> String {
        PercentEncoding.encoded(text, keeping: [UInt8(ascii: "/")])
    }
}
