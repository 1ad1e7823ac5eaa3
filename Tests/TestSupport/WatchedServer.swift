import Dispatch
import Foundation
import PeregrineCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a server for the tests (``NginxServer``, ``LighttpdServer``) could not be set up or did
/// not come up.
public struct ServerProcessError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, and what to do about it when that is known.
    public var message: String
    /// The server's error log and console output at the time, when it was started.
    public var errorLog: String

    /// Creates an error.
    public init(_ message: String, errorLog: String = "") {
        self.message = message
        self.errorLog = errorLog
    }

    public var description: String {
        let log = errorLog.trimmingCharacters(in: .whitespacesAndNewlines)
        return log.isEmpty ? message : "\(message)\n--- server error log ---\n\(log)"
    }
}

/// What ``NginxServer`` throws.
public typealias NginxServerError = ServerProcessError
/// What ``LighttpdServer`` throws.
public typealias LighttpdServerError = ServerProcessError

/// A server binary run for one test on 127.0.0.1, in a temporary directory of its own: what
/// ``NginxServer`` and ``LighttpdServer`` share.
///
/// ``start(portCount:bindAttempts:startTimeout:launch:)`` picks free ports, has the caller write
/// its configuration for them, launches the server, and polls every 20 ms until the pid file
/// exists and every port accepts a connection; when another process took a port in between
/// (`Address already in use` in the log) it tries again with new ports.
///
/// The server runs under a small `/bin/sh` watchdog that reads the server's standard input, a
/// pipe whose write end only this process holds, so even a test process that crashes takes the
/// server down with it; it runs with every signal unblocked and at its default (`env
/// --default-signal`, from coreutils), whatever the mask of the thread that started it.
/// ``stop()`` ends it, waits for it and removes the directory; `deinit` of the owner calls it.
final class WatchedServer: Sendable {
    /// What to run once the ports are known.
    struct Command {
        var executable: String
        var arguments: [String]
    }

    /// The server's name in messages (`nginx`).
    let name: String
    /// The server's private directory: `error.log`, `console.log` and `NAME.pid` live here.
    let directory: TemporaryDirectory
    private let state = Locked<State>(State())

    private struct State {
        var running: RunningServer?
        var ports: [Int]?
    }

    init(name: String, directory: TemporaryDirectory) {
        self.name = name
        self.directory = directory
    }

    /// The ports listened on, in the order asked; nil unless the server is running.
    var ports: [Int]? { state.withLock { $0.ports } }

    /// Whether the server is running.
    var isRunning: Bool { state.withLock { $0.running?.process.isRunning ?? false } }

    /// The server's error log and console output so far.
    var errorLog: String {
        let parts = [directory.path("error.log"), directory.path("console.log")].compactMap {
            FileManager.default.contents(atPath: $0).map { String(decoding: $0, as: UTF8.self) }
        }
        return parts.filter { !$0.isEmpty }.joined(separator: "\n")
    }

    private var pidPath: String { directory.path("\(name).pid") }

    /// Starts the server on `portCount` distinct free ports and returns them once every one
    /// accepts connections. `launch` writes the configuration for the ports and says what to run.
    ///
    /// - Throws: ``ServerProcessError`` with the server's log when it exits, rejects its
    ///   configuration, or does not accept connections within `startTimeout`. The server is not
    ///   left running when this throws.
    func start(
        portCount: Int, bindAttempts: Int, startTimeout: Duration,
        launch: ([Int]) throws(ServerProcessError) -> Command
    ) async throws(ServerProcessError) -> [Int] {
        precondition(state.withLock { $0.running == nil }, "this \(name) server was already started")
        var lastLog = ""
        for _ in 0..<bindAttempts {
            var ports: [Int] = []
            do {
                while ports.count < portCount {
                    let port = try FreePort.pick()
                    if !ports.contains(port) { ports.append(port) }
                }
            } catch {
                throw ServerProcessError("no free port on 127.0.0.1: \(error)")
            }
            for stale in [directory.path("error.log"), directory.path("console.log"), pidPath] {
                try? FileManager.default.removeItem(atPath: stale)
            }
            let running = try run(try launch(ports))
            switch await waitUntilReady(running, ports: ports, timeout: startTimeout) {
            case .ready:
                state.withLock { $0.ports = ports }
                return ports
            case .portTaken(let log):
                lastLog = log
                shutDown(running)
            case .failed(let message, let log):
                shutDown(running)
                throw ServerProcessError(message, errorLog: log)
            }
        }
        throw ServerProcessError("\(name) could not bind free ports in \(bindAttempts) attempts", errorLog: lastLog)
    }

    /// Stops the server, waits for it to exit and removes the directory. Safe to call more than
    /// once, and when ``start(portCount:bindAttempts:startTimeout:launch:)`` failed or was never
    /// called. Blocks for as long as the server takes to exit, at most about 10 s before it is
    /// killed.
    func stop() {
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

    /// The `/bin/sh` script that runs the server (its arguments) and ends it when standard
    /// input reaches end of file, which happens when ``stop()`` closes the pipe or this process
    /// dies. The background reader takes standard input from a copy (fd 3), because a shell
    /// without job control gives background commands `/dev/null` as standard input.
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

    private func run(_ command: Command) throws(ServerProcessError) -> RunningServer {
        let consolePath = directory.path("console.log")
        let process = Process()
        // The caller's thread may block signals (Dispatch's worker threads block most), and a
        // spawned process inherits the mask: the server would never see the SIGTERM that stops
        // it. `env --default-signal` unblocks every signal and resets their handlers first.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["--default-signal", "/bin/sh", "-c", Self.watchdogScript, "\(name)-watchdog", command.executable]
            + command.arguments
        let input = Pipe()
        // Only this server's watchdog may hold the pipe: a copy of the write end inherited by
        // another child (a concurrent test's server, say) would hide the end of file that stops it.
        _ = fcntl(input.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(input.fileHandleForReading.fileDescriptor, F_SETFD, FD_CLOEXEC)
        process.standardInput = input
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            _ = FileManager.default.createFile(atPath: consolePath, contents: nil)
            let console = try FileHandle(forWritingTo: URL(fileURLWithPath: consolePath))
            defer { try? console.close() }
            process.standardOutput = console
            process.standardError = console
            try process.run()
        } catch {
            throw ServerProcessError("cannot launch \(command.executable): \(error)", errorLog: errorLog)
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

    private func waitUntilReady(_ running: RunningServer, ports: [Int], timeout: Duration) async -> Readiness {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let log = errorLog
            if log.contains("Address already in use") { return .portTaken(log: log) }
            if !running.process.isRunning {
                return .failed(
                    "\(name) exited with status \(running.process.terminationStatus) while starting", log: errorLog)
            }
            if FileManager.default.fileExists(atPath: pidPath), ports.allSatisfy(FreePort.isAccepting) {
                return .ready
            }
            if clock.now >= deadline {
                let listed = ports.map(String.init).joined(separator: ", ")
                return .failed(
                    "\(name) did not accept connections on 127.0.0.1 (\(listed)) within \(timeout)", log: log)
            }
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                return .failed("starting \(name) was cancelled", log: log)
            }
        }
    }

    /// Ends the server and its watchdog and waits for them: closing the watchdog's input stops
    /// the server with SIGTERM. If that takes more than 5 s, the server is killed, and then the
    /// watchdog. The server goes first so that the watchdog still reaps it: an orphan would be
    /// left to PID 1, which in a container may never reap it.
    private func shutDown(_ running: RunningServer) {
        state.withLock { state in
            if state.running === running { state.running = nil }
        }
        try? running.input.close()
        guard running.exited.wait(timeout: .now() + .seconds(5)) == .timedOut else { return }
        if let text = try? String(contentsOfFile: pidPath, encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0
        {
            _ = kill(pid, SIGKILL)
            guard running.exited.wait(timeout: .now() + .seconds(5)) == .timedOut else { return }
        }
        _ = kill(running.process.processIdentifier, SIGKILL)
        _ = running.exited.wait(timeout: .now() + .seconds(5))
    }
}

/// A launched watchdog and the server under it.
private final class RunningServer: Sendable {
    let process: Process
    /// The write end of the watchdog's standard input; closing it stops the server.
    let input: FileHandle
    /// Signalled once when the watchdog exits.
    let exited: DispatchSemaphore

    init(process: Process, input: FileHandle, exited: DispatchSemaphore) {
        self.process = process
        self.input = input
        self.exited = exited
    }
}
