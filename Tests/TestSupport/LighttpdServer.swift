import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real lighttpd (`/usr/sbin/lighttpd`, Debian package lighttpd) with `mod_auth`, started in
/// the foreground (`-D`) on 127.0.0.1 at a free port for one test: Basic against an `htpasswd`
/// file, Digest (MD5, SHA-256, SHA-512-256, userhash) against an `htdigest` file.
///
/// Everything lives in a fresh temporary directory: `lighttpd.conf`, the pid file, the error
/// log, the password files and the document root (``rootDirectory``).
///
/// ```swift
/// let server = try LighttpdServer(.init(
///     users: [.init(name: "alice", password: "secret")],
///     protectedLocations: [.init(pathPrefix: "/digest/", realm: "Files", method: .digest(algorithms: ["MD5"]))]))
/// defer { server.stop() }
/// try await server.start()
/// ```
///
/// Every request lighttpd reads is logged with its headers (``receivedRequests``) before it is
/// answered, so once a transfer has completed, its requests are in the log.
///
/// The server never outlives its test: ``stop()`` ends lighttpd, waits for it and removes the
/// directory, and `deinit` does the same. lighttpd runs under a `/bin/sh` watchdog that reads a
/// pipe only this process writes, so a crashed test process takes lighttpd down too; it runs
/// with every signal at its default (`env --default-signal`).
///
/// Thread safety: all members may be used from any thread.
public final class LighttpdServer: Sendable {
    /// Where lighttpd is expected unless the configuration names another binary.
    public static let defaultExecutablePath = "/usr/sbin/lighttpd"
    /// The Debian package that provides lighttpd.
    public static let debianPackage = "lighttpd"
    /// The Debian package that provides `htpasswd`.
    public static let htpasswdPackage = "apache2-utils"

    /// How the server was configured.
    public let configuration: Configuration
    /// The server's private directory, removed by ``stop()``.
    public let directory: TemporaryDirectory
    /// The document root: a file at `rootDirectory + "/a/b.bin"` is served as `/a/b.bin`.
    public let rootDirectory: String

    private let server: WatchedServer

    /// Prepares the directory, the document root and the password files' text; nothing runs
    /// until ``start()``.
    ///
    /// - Throws: ``LighttpdServerError`` when lighttpd is not installed (naming the Debian
    ///   package) or the directory cannot be made.
    public init(_ configuration: Configuration) throws(LighttpdServerError) {
        do {
            try ChildProcess.requireExecutable(at: configuration.executablePath, debianPackage: Self.debianPackage)
        } catch {
            throw LighttpdServerError("the authentication tests need a real lighttpd: \(error)")
        }
        self.configuration = configuration
        do {
            directory = try TemporaryDirectory(prefix: "peregrine-lighttpd")
        } catch {
            throw LighttpdServerError("cannot make the server's directory: \(error)")
        }
        rootDirectory = directory.path("root")
        do {
            try FileManager.default.createDirectory(atPath: rootDirectory, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: directory.path("temp"), withIntermediateDirectories: false)
            for location in configuration.protectedLocations {
                try FileManager.default.createDirectory(
                    atPath: rootDirectory + location.pathPrefix, withIntermediateDirectories: true)
            }
            try configuration.htdigestFile().write(
                toFile: directory.path("htdigest"), atomically: true, encoding: .utf8)
        } catch {
            directory.remove()
            throw LighttpdServerError("cannot prepare the server's files in \(directory): \(error)")
        }
        server = WatchedServer(name: "lighttpd", directory: directory)
    }

    deinit { stop() }

    /// The port listened on. Only valid while the server is running.
    public var port: Int {
        guard let port = server.ports?.first else { preconditionFailure("start() the lighttpd server first") }
        return port
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The URL of a path on this server, such as `url("/digest/file.bin")`.
    public func url(_ path: String) -> String { baseURL + Self.absolute(path) }

    /// The file system path of a document served as `path`.
    public func documentPath(_ path: String) -> String { rootDirectory + Self.absolute(path) }

    /// Whether lighttpd is running.
    public var isRunning: Bool { server.isRunning }

    /// lighttpd's error log and console output so far.
    public var errorLog: String { server.errorLog }

    /// The requests lighttpd has read, oldest first, from its request-header log.
    public var receivedRequests: [LighttpdRequest] {
        LighttpdRequest.parse(log: errorLog)
    }

    /// The requests for `path` (the request-target without the query), oldest first.
    public func requests(for path: String) -> [LighttpdRequest] {
        receivedRequests.filter { $0.path == path }
    }

    /// Writes the htpasswd file (`htpasswd -B`), starts lighttpd and returns once it accepts
    /// connections.
    ///
    /// Picks a free port and retries with a new one when another process took it in between
    /// (``Configuration/bindAttempts`` times). Readiness is polled every 20 ms: the pid file
    /// exists, lighttpd still runs, and the port accepts a TCP connection.
    ///
    /// - Throws: ``LighttpdServerError`` with lighttpd's error log when it exits, rejects its
    ///   configuration or does not come up within ``Configuration/startTimeout``. lighttpd is
    ///   not left running when this throws.
    public func start() async throws(LighttpdServerError) {
        try await writePasswordFile()
        _ = try await server.start(
            portCount: 1, bindAttempts: configuration.bindAttempts, startTimeout: configuration.startTimeout
        ) { (ports) throws(ServerProcessError) in
            let configPath = directory.path("lighttpd.conf")
            let text = configuration.render(directory: directory.path, root: rootDirectory, port: ports[0])
            do {
                try text.write(toFile: configPath, atomically: true, encoding: .utf8)
            } catch {
                throw ServerProcessError("cannot write \(configPath): \(error)")
            }
            return WatchedServer.Command(executable: configuration.executablePath, arguments: ["-D", "-f", configPath])
        }
    }

    /// Stops lighttpd, waits for it to exit and removes the server's directory.
    ///
    /// Safe to call more than once, and when ``start()`` failed or was never called.
    public func stop() { server.stop() }

    private func writePasswordFile() async throws(LighttpdServerError) {
        let path = directory.path("htpasswd")
        guard configuration.protectedLocations.contains(where: { $0.method == .basic }) else { return }
        let htpasswd: String
        do {
            htpasswd = try ChildProcess.executable(named: "htpasswd", debianPackage: Self.htpasswdPackage)
        } catch {
            throw LighttpdServerError("Basic authentication needs htpasswd: \(error)")
        }
        for (index, user) in configuration.users.enumerated() {
            // -b: password on the command line (a test password); -B: bcrypt, which lighttpd checks with crypt(3).
            let arguments = (index == 0 ? ["-c"] : []) + ["-b", "-B", "-C", "5", path, user.name, user.password]
            do {
                try await ChildProcess.run(htpasswd, arguments)
            } catch {
                throw LighttpdServerError("htpasswd failed: \(error)")
            }
        }
    }

    private static func absolute(_ path: String) -> String { path.hasPrefix("/") ? path : "/" + path }
}
