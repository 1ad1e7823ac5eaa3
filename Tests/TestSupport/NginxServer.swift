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

/// A real nginx (`/usr/sbin/nginx`, from the Debian package nginx-light), started as a child process on 127.0.0.1 for one test.
///
/// Everything the server needs lives in a fresh temporary directory: the generated
/// `nginx.conf`, the pid file, the error log, the temp paths and the document root
/// (``rootDirectory``). Files are served straight from the root, with ranges, `If-Range`,
/// strong ETags and `Last-Modified`, so tests write the files to serve into it, before or after
/// ``start()``.
///
/// ```swift
/// let server = try NginxServer(.init(limitRate: 8 << 20))
/// defer { server.stop() }
/// try await server.start()
/// let url = server.httpURL("/file.bin")
/// ```
///
/// The server never outlives its test: ``stop()`` (call it from a `defer`) ends nginx, waits
/// for it and removes the directory, and `deinit` does the same as a last resort. nginx runs
/// under a small `/bin/sh` watchdog that reads the server's standard input, a pipe whose write
/// end only this process holds, so even a test process that crashes takes nginx down with it.
/// nginx runs with every signal unblocked and at its default (`env --default-signal`, from
/// coreutils), whatever the mask of the thread that started it.
///
/// Thread safety: all members may be used from any thread.
public final class NginxServer: Sendable {
    /// Where nginx is expected unless the configuration names another binary; a missing binary
    /// fails ``init(_:)`` with a message naming ``debianPackage``.
    public static let defaultExecutablePath = "/usr/sbin/nginx"
    /// The Debian package that provides ``defaultExecutablePath``.
    public static let debianPackage = "nginx-light"

    /// How the server was configured.
    public let configuration: Configuration
    /// The server's private directory, removed by ``stop()``.
    public let directory: TemporaryDirectory
    /// The document root: a file at `rootDirectory + "/a/b.bin"` is served as `/a/b.bin`.
    public let rootDirectory: String

    private let server: WatchedServer

    /// Prepares the server's directory and document root; nothing runs until ``start()``.
    ///
    /// - Throws: ``NginxServerError`` when nginx is not installed (naming the Debian package),
    ///   or the directory cannot be made.
    public init(_ configuration: Configuration = Configuration()) throws(NginxServerError) {
        do {
            try ChildProcess.requireExecutable(at: configuration.executablePath, debianPackage: Self.debianPackage)
        } catch {
            throw NginxServerError("the integration tests need a real nginx: \(error)")
        }
        if let tls = configuration.tls {
            for path in [tls.certificatePath, tls.privateKeyPath] where !FileManager.default.fileExists(atPath: path) {
                throw NginxServerError("the TLS listener's file \(path) does not exist")
            }
        }
        self.configuration = configuration
        do {
            directory = try TemporaryDirectory(prefix: "peregrine-nginx")
        } catch {
            throw NginxServerError("cannot make the server's directory: \(error)")
        }
        rootDirectory = directory.path("root")
        do {
            try FileManager.default.createDirectory(atPath: rootDirectory, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: directory.path("temp"), withIntermediateDirectories: false)
        } catch {
            directory.remove()
            throw NginxServerError("cannot make the document root in \(directory): \(error)")
        }
        server = WatchedServer(name: "nginx", directory: directory)
    }

    deinit { stop() }

    /// The port of the plain http listener. Only valid while the server is running.
    public var httpPort: Int {
        guard let ports = server.ports else { preconditionFailure("start() the nginx server first") }
        return ports[0]
    }

    /// The port of the TLS listener, or nil when the configuration has none. Only valid while
    /// the server is running.
    public var httpsPort: Int? {
        guard let ports = server.ports else { preconditionFailure("start() the nginx server first") }
        return configuration.tls == nil ? nil : ports[1]
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    public var httpBaseURL: String { "http://127.0.0.1:\(httpPort)" }

    /// `https://127.0.0.1:<port>` of the TLS listener, or nil when there is none.
    public var httpsBaseURL: String? { httpsPort.map { "https://127.0.0.1:\($0)" } }

    /// The plain http URL of a path on this server, such as `httpURL("/file.bin")`.
    public func httpURL(_ path: String) -> String { httpBaseURL + Self.absolute(path) }

    /// The https URL of a path on this server. The configuration must have a TLS listener.
    public func httpsURL(_ path: String) -> String {
        guard let base = httpsBaseURL else { preconditionFailure("this nginx server has no TLS listener") }
        return base + Self.absolute(path)
    }

    /// The file system path of a document served as `path` (e.g. `/file.bin`).
    public func documentPath(_ path: String) -> String { rootDirectory + Self.absolute(path) }

    /// Whether nginx is running.
    public var isRunning: Bool { server.isRunning }

    /// nginx's error log and console output so far.
    public var errorLog: String { server.errorLog }

    /// Starts nginx and returns once every listener accepts connections.
    ///
    /// Picks free ports, writes `nginx.conf` and launches nginx; when another process took a
    /// port in between, tries again with new ports (``Configuration/bindAttempts`` times).
    /// Readiness is polled every 20 ms: the pid file exists (nginx writes it after binding its
    /// sockets), nginx still runs, and each port accepts a TCP connection.
    ///
    /// - Throws: ``NginxServerError`` with nginx's error log when nginx exits, rejects its
    ///   configuration, or does not accept connections within ``Configuration/startTimeout``.
    ///   nginx is not left running when this throws.
    public func start() async throws(NginxServerError) {
        _ = try await server.start(
            portCount: configuration.tls == nil ? 1 : 2, bindAttempts: configuration.bindAttempts,
            startTimeout: configuration.startTimeout
        ) { (ports) throws(ServerProcessError) in
            let configPath = directory.path("nginx.conf")
            let text = configuration.render(
                directory: directory.path, root: rootDirectory, httpPort: ports[0],
                httpsPort: ports.count > 1 ? ports[1] : nil)
            do {
                try text.write(toFile: configPath, atomically: true, encoding: .utf8)
            } catch {
                throw ServerProcessError("cannot write \(configPath): \(error)")
            }
            return WatchedServer.Command(
                executable: configuration.executablePath,
                arguments: ["-p", directory.path + "/", "-c", configPath, "-e", directory.path("error.log")])
        }
    }

    /// Stops nginx, waits for it to exit and removes the server's directory.
    ///
    /// Safe to call more than once, and when ``start()`` failed or was never called. Blocks for
    /// as long as nginx takes to exit (milliseconds), at most about 10 s before it is killed.
    public func stop() { server.stop() }

    private static func absolute(_ path: String) -> String { path.hasPrefix("/") ? path : "/" + path }
}
