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

    private let state = Mutex<State>(State())

    private struct State {
        var running: RunningServer?
        var ports: Ports?
    }

    private struct Ports {
        var http: Int
        var https: Int?
    }

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
    }

    deinit { stop() }

    /// The port of the plain http listener. Only valid while the server is running.
    public var httpPort: Int {
        guard let ports = state.withLock({ $0.ports }) else { preconditionFailure("start() the nginx server first") }
        return ports.http
    }

    /// The port of the TLS listener, or nil when the configuration has none. Only valid while
    /// the server is running.
    public var httpsPort: Int? {
        guard let ports = state.withLock({ $0.ports }) else { preconditionFailure("start() the nginx server first") }
        return ports.https
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
    public var isRunning: Bool { state.withLock { $0.running?.process.isRunning ?? false } }

    /// nginx's error log and console output so far.
    public var errorLog: String {
        let parts = [directory.path("error.log"), directory.path("console.log")].compactMap {
            FileManager.default.contents(atPath: $0).map { String(decoding: $0, as: UTF8.self) }
        }
        return parts.filter { !$0.isEmpty }.joined(separator: "\n")
    }

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
        precondition(state.withLock { $0.running == nil }, "this nginx server was already started")
        var lastLog = ""
        for _ in 0..<configuration.bindAttempts {
            let ports: Ports
            do {
                let http = try FreePort.pick()
                var https: Int?
                if configuration.tls != nil {
                    repeat { https = try FreePort.pick() } while https == http
                }
                ports = Ports(http: http, https: https)
            } catch {
                throw NginxServerError("no free port on 127.0.0.1: \(error)")
            }
            let running = try launch(ports: ports)
            switch await waitUntilReady(running, ports: ports) {
            case .ready:
                state.withLock { $0.ports = ports }
                return
            case .portTaken(let log):
                lastLog = log
                shutDown(running)
            case .failed(let message, let log):
                shutDown(running)
                throw NginxServerError(message, errorLog: log)
            }
        }
        throw NginxServerError(
            "nginx could not bind free ports in \(configuration.bindAttempts) attempts", errorLog: lastLog)
    }

    /// Stops nginx, waits for it to exit and removes the server's directory.
    ///
    /// Safe to call more than once, and when ``start()`` failed or was never called. Blocks for
    /// as long as nginx takes to exit (milliseconds), at most about 10 s before it is killed.
    public func stop() {
        let running = state.withLock { state in
            defer {
                state.running = nil
                state.ports = nil
            }
            return state.running
        }
        if let running { shutDown(running) }
        directory.remove()
    }

    // MARK: - Launching

    /// The `/bin/sh` script that runs nginx (its arguments) and ends it when standard input
    /// reaches end of file, which happens when ``stop()`` closes the pipe or this process dies.
    /// The background reader takes standard input from a copy (fd 3), because a shell without
    /// job control gives background commands `/dev/null` as standard input.
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

    private func launch(ports: Ports) throws(NginxServerError) -> RunningServer {
        let configPath = directory.path("nginx.conf")
        let errorLogPath = directory.path("error.log")
        let consolePath = directory.path("console.log")
        for stale in [errorLogPath, consolePath, directory.path("nginx.pid")] {
            try? FileManager.default.removeItem(atPath: stale)
        }
        let text = configuration.render(
            directory: directory.path, root: rootDirectory, httpPort: ports.http, httpsPort: ports.https)
        let process = Process()
        // The caller's thread may block signals (Dispatch's worker threads block most), and a
        // spawned process inherits the mask: nginx would never see the SIGTERM that stops it.
        // `env --default-signal` unblocks every signal and resets their handlers first.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "--default-signal", "/bin/sh", "-c", Self.watchdogScript, "nginx-watchdog",
            configuration.executablePath, "-p", directory.path + "/", "-c", configPath, "-e", errorLogPath,
        ]
        let input = Pipe()
        // Only nginx's watchdog may hold the pipe: a copy of the write end inherited by another
        // child (a concurrent test's nginx, say) would hide the end of file that stops this server.
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
            throw NginxServerError("cannot launch \(configuration.executablePath): \(error)", errorLog: errorLog)
        }
        try? input.fileHandleForReading.close()
        let running = RunningServer(process: process, input: input.fileHandleForWriting, exited: exited)
        state.withLock { $0.running = running }
        return running
    }

    private enum Readiness {
        case ready
        case portTaken(log: String)
        case failed(String, log: String)
    }

    private func waitUntilReady(_ running: RunningServer, ports: Ports) async -> Readiness {
        let clock = ContinuousClock()
        let deadline = clock.now + configuration.startTimeout
        let pidPath = directory.path("nginx.pid")
        while true {
            let log = errorLog
            if log.contains("Address already in use") { return .portTaken(log: log) }
            if !running.process.isRunning {
                return .failed(
                    "nginx exited with status \(running.process.terminationStatus) while starting", log: errorLog)
            }
            if FileManager.default.fileExists(atPath: pidPath), FreePort.isAccepting(ports.http),
                ports.https.map(FreePort.isAccepting) ?? true
            {
                return .ready
            }
            if clock.now >= deadline {
                return .failed(
                    "nginx did not accept connections on 127.0.0.1:\(ports.http)"
                        + (ports.https.map { " and :\($0)" } ?? "") + " within \(configuration.startTimeout)",
                    log: log
                )
            }
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                return .failed("starting nginx was cancelled", log: log)
            }
        }
    }

    /// Ends nginx and its watchdog and waits for them: closing the watchdog's input stops nginx
    /// with SIGTERM. If that takes more than 5 s, nginx is killed, and then the watchdog.
    ///
    /// nginx goes first so that the watchdog still reaps it: an orphan would be left to PID 1,
    /// which in a container may never reap it.
    private func shutDown(_ running: RunningServer) {
        state.withLock { state in
            if state.running === running { state.running = nil }
        }
        try? running.input.close()
        guard running.exited.wait(timeout: .now() + .seconds(5)) == .timedOut else { return }
        if let text = try? String(contentsOfFile: directory.path("nginx.pid"), encoding: .utf8),
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

/// A launched watchdog and nginx under it.
private final class RunningServer: Sendable {
    let process: Process
    /// The write end of the watchdog's standard input; closing it stops nginx.
    let input: FileHandle
    /// Signalled once when the watchdog exits.
    let exited: DispatchSemaphore

    init(process: Process, input: FileHandle, exited: DispatchSemaphore) {
        self.process = process
        self.input = input
        self.exited = exited
    }
}
