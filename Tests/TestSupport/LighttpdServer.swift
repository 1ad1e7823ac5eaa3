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

    private let state = Mutex<State>(State())

    private struct State {
        var running: RunningLighttpd?
        var port: Int?
    }

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
    }

    deinit { stop() }

    /// The port listened on. Only valid while the server is running.
    public var port: Int {
        guard let port = state.withLock({ $0.port }) else { preconditionFailure("start() the lighttpd server first") }
        return port
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The URL of a path on this server, such as `url("/digest/file.bin")`.
    public func url(_ path: String) -> String { baseURL + Self.absolute(path) }

    /// The file system path of a document served as `path`.
    public func documentPath(_ path: String) -> String { rootDirectory + Self.absolute(path) }

    /// Whether lighttpd is running.
    public var isRunning: Bool { state.withLock { $0.running?.process.isRunning ?? false } }

    /// lighttpd's error log and console output so far.
    public var errorLog: String {
        let parts = [directory.path("error.log"), directory.path("console.log")].compactMap {
            FileManager.default.contents(atPath: $0).map { String(decoding: $0, as: UTF8.self) }
        }
        return parts.filter { !$0.isEmpty }.joined(separator: "\n")
    }

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
        precondition(state.withLock { $0.running == nil }, "this lighttpd server was already started")
        try await writePasswordFile()
        var lastLog = ""
        for _ in 0..<configuration.bindAttempts {
            let port: Int
            do {
                port = try FreePort.pick()
            } catch {
                throw LighttpdServerError("no free port on 127.0.0.1: \(error)")
            }
            let running = try launch(port: port)
            switch await waitUntilReady(running, port: port) {
            case .ready:
                state.withLock { $0.port = port }
                return
            case .portTaken(let log):
                lastLog = log
                shutDown(running)
            case .failed(let message, let log):
                shutDown(running)
                throw LighttpdServerError(message, errorLog: log)
            }
        }
        throw LighttpdServerError(
            "lighttpd could not bind a free port in \(configuration.bindAttempts) attempts", errorLog: lastLog)
    }

    /// Stops lighttpd, waits for it to exit and removes the server's directory.
    ///
    /// Safe to call more than once, and when ``start()`` failed or was never called.
    public func stop() {
        let running = state.withLock { state in
            defer {
                state.running = nil
                state.port = nil
            }
            return state.running
        }
        if let running { shutDown(running) }
        directory.remove()
    }

    // MARK: - Launching

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

    /// The `/bin/sh` script that runs lighttpd (its arguments) and ends it when standard input
    /// reaches end of file, which happens when ``stop()`` closes the pipe or this process dies.
    private static let watchdogScript = """
        exec 3<&0
        "$@" </dev/null 3<&- &
        server=$!
        { read -r _ignored; kill -TERM "$server" 2>/dev/null; } <&3 &
        watcher=$!
        exec 3<&-
        wait "$server"
        status=$?
        kill "$watcher" 2>/dev/null
        exit "$status"
        """

    private func launch(port: Int) throws(LighttpdServerError) -> RunningLighttpd {
        let configPath = directory.path("lighttpd.conf")
        let consolePath = directory.path("console.log")
        for stale in [directory.path("error.log"), consolePath, directory.path("lighttpd.pid")] {
            try? FileManager.default.removeItem(atPath: stale)
        }
        let text = configuration.render(directory: directory.path, root: rootDirectory, port: port)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "--default-signal", "/bin/sh", "-c", Self.watchdogScript, "lighttpd-watchdog",
            configuration.executablePath, "-D", "-f", configPath,
        ]
        let input = Pipe()
        _ = fcntl(input.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(input.fileHandleForReading.fileDescriptor, F_SETFD, FD_CLOEXEC)
        process.standardInput = input
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try text.write(toFile: configPath, atomically: true, encoding: .utf8)
            _ = FileManager.default.createFile(atPath: consolePath, contents: nil)
            let console = try FileHandle(forWritingTo: URL(fileURLWithPath: consolePath))
            defer { try? console.close() }
            process.standardOutput = console
            process.standardError = console
            try process.run()
        } catch {
            throw LighttpdServerError("cannot launch \(configuration.executablePath): \(error)", errorLog: errorLog)
        }
        try? input.fileHandleForReading.close()
        let running = RunningLighttpd(process: process, input: input.fileHandleForWriting, exited: exited)
        state.withLock { $0.running = running }
        return running
    }

    private enum Readiness {
        case ready
        case portTaken(log: String)
        case failed(String, log: String)
    }

    private func waitUntilReady(_ running: RunningLighttpd, port: Int) async -> Readiness {
        let clock = ContinuousClock()
        let deadline = clock.now + configuration.startTimeout
        let pidPath = directory.path("lighttpd.pid")
        while true {
            let log = errorLog
            if log.contains("Address already in use") { return .portTaken(log: log) }
            if !running.process.isRunning {
                return .failed(
                    "lighttpd exited with status \(running.process.terminationStatus) while starting", log: errorLog)
            }
            if FileManager.default.fileExists(atPath: pidPath), FreePort.isAccepting(port) {
                return .ready
            }
            if clock.now >= deadline {
                return .failed(
                    "lighttpd did not accept connections on 127.0.0.1:\(port) within \(configuration.startTimeout)",
                    log: log)
            }
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                return .failed("starting lighttpd was cancelled", log: log)
            }
        }
    }

    /// Ends lighttpd and its watchdog and waits for them: closing the watchdog's input stops
    /// lighttpd with SIGTERM; after 5 s it is killed, then the watchdog.
    private func shutDown(_ running: RunningLighttpd) {
        state.withLock { state in
            if state.running === running { state.running = nil }
        }
        try? running.input.close()
        guard running.exited.wait(timeout: .now() + .seconds(5)) == .timedOut else { return }
        if let text = try? String(contentsOfFile: directory.path("lighttpd.pid"), encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0
        {
            _ = kill(pid, SIGKILL)
            guard running.exited.wait(timeout: .now() + .seconds(5)) == .timedOut else { return }
        }
        _ = kill(running.process.processIdentifier, SIGKILL)
        _ = running.exited.wait(timeout: .now() + .seconds(5))
    }

    private static func absolute(_ path: String) -> String { path.hasPrefix("/") ? path : "/" + path }
}

/// A launched watchdog and lighttpd under it.
private final class RunningLighttpd: Sendable {
    let process: Process
    let input: FileHandle
    let exited: DispatchSemaphore

    init(process: Process, input: FileHandle, exited: DispatchSemaphore) {
        self.process = process
        self.input = input
        self.exited = exited
    }
}
