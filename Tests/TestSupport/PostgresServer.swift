import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A real PostgreSQL (Debian's `postgresql`, 15 here), made by `initdb` in a fresh temporary
/// directory and started as a child process for the tests: TCP on 127.0.0.1 at a free port and
/// a unix socket in the same directory.
///
/// ```swift
/// let server = try PostgresServer()
/// defer { server.stop() }
/// try await server.start()
/// try await server.createDatabase("orders")
/// let url = server.connectionString(database: "orders")
/// ```
///
/// The superuser is ``username`` with ``password``: TCP logins must give it (SCRAM), socket
/// logins are trusted. PostgreSQL refuses to run as root, so when the tests run as root (CI
/// does) `initdb` and the server run as `nobody` through `setpriv`, and the directory is handed
/// to that user. Durability is switched off (`fsync=off`): the tests check behaviour, not disks.
///
/// Like ``NginxServer``, the server runs under a watchdog that ends it when this process ends,
/// and ``stop()`` (fast shutdown: open connections are ended) waits for it and removes the
/// directory.
public final class PostgresServer: Sendable {
    /// The Debian package that provides the server programs.
    public static let debianPackage = "postgresql"
    /// The superuser's name.
    public let username = "peregrine"
    /// The superuser's password (with characters a connection string must escape).
    public let password = "s3cret:p@ss/wörd"
    /// The server's private directory: the data directory `data`, the socket, the logs.
    public let directory: TemporaryDirectory
    /// The directory of `initdb`, `postgres`, `pg_ctl` and `psql`.
    public let binDirectory: String

    private let server: WatchedServer

    /// Where the PostgreSQL programs are: `$PEREGRINE_POSTGRES_BIN`, else Debian's newest
    /// `/usr/lib/postgresql/N/bin`, else the directory of `initdb` on `PATH`.
    public static func findBinDirectory() throws(ServerProcessError) -> String {
        if let configured = ProcessInfo.processInfo.environment["PEREGRINE_POSTGRES_BIN"], !configured.isEmpty {
            return configured
        }
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for version in versions {
            let candidate = "/usr/lib/postgresql/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: candidate + "/initdb") { return candidate }
        }
        do {
            let initdb = try ChildProcess.executable(named: "initdb", debianPackage: debianPackage)
            return (try? FileManager.default.destinationOfSymbolicLink(atPath: initdb))
                .map { ($0 as NSString).deletingLastPathComponent } ?? (initdb as NSString).deletingLastPathComponent
        } catch {
            throw ServerProcessError("the PostgreSQL tests need a real PostgreSQL: \(error)")
        }
    }

    /// Prepares the directory; nothing runs until ``start()``.
    ///
    /// - Throws: ``ServerProcessError`` when PostgreSQL is not installed (naming the Debian
    ///   package) or the directory cannot be made.
    public init() throws(ServerProcessError) {
        binDirectory = try Self.findBinDirectory()
        do {
            directory = try TemporaryDirectory(prefix: "peregrine-postgres")
        } catch {
            throw ServerProcessError("cannot make the server's directory: \(error)")
        }
        if Self.runsAsRoot {
            // mkdtemp made it 0700 for root; the server's user must own it.
            _ = chown(directory.path, Self.nobody.uid, Self.nobody.gid)
        }
        server = WatchedServer(name: "postgres", directory: directory)
    }

    deinit { stop() }

    /// The data directory.
    public var dataDirectory: String { directory.path("data") }
    /// The directory holding the unix socket (`.s.PGSQL.<port>`).
    public var socketDirectory: String { directory.path }

    /// The TCP port. Only valid while the server is running.
    public var port: Int {
        guard let ports = server.ports else { preconditionFailure("start() the PostgreSQL server first") }
        return ports[0]
    }

    /// Whether the server is running.
    public var isRunning: Bool { server.isRunning }

    /// The server's log so far.
    public var errorLog: String { server.errorLog }

    /// `postgresql://peregrine:<password>@127.0.0.1:<port>/<database>`, the password escaped.
    public func connectionString(database: String) -> String {
        "postgresql://\(username):\(Self.escaped(password))@127.0.0.1:\(port)/\(database)"
    }

    /// `postgresql://peregrine@/<database>?host=<socket directory>&port=<port>`.
    public func socketConnectionString(database: String) -> String {
        "postgresql://\(username)@/\(database)?host=\(socketDirectory)&port=\(port)"
    }

    /// Runs `initdb`, then starts the server and returns once it accepts connections.
    ///
    /// - Throws: ``ServerProcessError`` with the server's log when `initdb` fails, the server
    ///   exits, or does not accept connections within 60 s. Nothing is left running then.
    public func start() async throws(ServerProcessError) {
        let passwordFile = directory.path("password")
        do {
            try password.write(toFile: passwordFile, atomically: false, encoding: .utf8)
        } catch {
            throw ServerProcessError("cannot write \(passwordFile): \(error)")
        }
        if Self.runsAsRoot { _ = chown(passwordFile, Self.nobody.uid, Self.nobody.gid) }
        do {
            try await ChildProcess.run(
                Self.runAsServerUser[0],
                Array(Self.runAsServerUser.dropFirst()) + [
                    binDirectory + "/initdb", "-D", dataDirectory, "-U", username, "--pwfile", passwordFile,
                    "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
                ],
                directory: directory.path)
        } catch {
            throw ServerProcessError("initdb failed: \(error)")
        }
        _ = try await server.start(portCount: 1, bindAttempts: 5, startTimeout: .seconds(60)) { ports in
            WatchedServer.Command(
                executable: Self.runAsServerUser[0],
                arguments: Array(Self.runAsServerUser.dropFirst()) + [
                    binDirectory + "/postgres", "-D", dataDirectory, "-p", String(ports[0]),
                    "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=\(socketDirectory)",
                    "-c", "external_pid_file=\(directory.path("postgres.pid"))", "-c", "fsync=off",
                    "-c", "full_page_writes=off", "-c", "max_connections=100", "-c", "log_min_messages=warning",
                ])
        }
        // The port accepts connections a moment before the server takes sessions ("the
        // database system is starting up"): wait for a query to pass.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while true {
            do {
                try await psql("SELECT 1")
                return
            } catch {
                if clock.now >= deadline {
                    stop()
                    throw ServerProcessError("PostgreSQL does not answer queries: \(error)", errorLog: errorLog)
                }
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Runs SQL with `psql` over the socket and returns its output (unaligned, tuples only).
    ///
    /// - Throws: ``ServerProcessError`` with psql's standard error when the SQL fails.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") async throws(ServerProcessError) -> String {
        do {
            return try await ChildProcess.run(
                binDirectory + "/psql",
                [
                    "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", socketDirectory, "-p", String(port),
                    "-U", username, "-d", database, "-c", sql,
                ]
            ).text.trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw ServerProcessError("psql failed: \(error)")
        }
    }

    /// Creates an empty database.
    public func createDatabase(_ name: String) async throws(ServerProcessError) {
        try await psql("CREATE DATABASE \"\(name)\"")
    }

    /// Stops the server (fast shutdown: sessions are ended), waits for it and removes the
    /// directory. Safe to call more than once.
    public func stop() {
        if server.isRunning {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.runAsServerUser[0])
            process.arguments =
                Array(Self.runAsServerUser.dropFirst()) + [
                    binDirectory + "/pg_ctl", "stop", "-D", dataDirectory, "-m", "fast", "-w", "-t", "20",
                ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            if (try? process.run()) != nil { process.waitUntilExit() }
        }
        server.stop()
    }

    // MARK: Running as an unprivileged user

    private static var runsAsRoot: Bool { geteuid() == 0 }

    private struct Account: Sendable {
        var uid: uid_t
        var gid: gid_t
    }

    /// `nobody`'s ids (65534 when the account database has no entry).
    private static let nobody: Account = {
        guard let entry = getpwnam("nobody") else { return Account(uid: 65_534, gid: 65_534) }
        return Account(uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }()

    /// The command prefix that runs a program as the server's user: `setpriv` to `nobody` as
    /// root (it execs, so signals reach the server itself), else `env` (this user).
    private static var runAsServerUser: [String] {
        guard runsAsRoot else { return ["/usr/bin/env"] }
        return [
            "/usr/bin/setpriv", "--reuid=\(nobody.uid)", "--regid=\(nobody.gid)", "--clear-groups",
            "--inh-caps=-all",
        ]
    }

    private static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}
