import PeregrineCore
import PeregrineMockTransport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A real HTTP/1.1 server on 127.0.0.1 that serves a `MockServer`'s routes, for testing a
/// socket-based transport (the libcurl backend) against the same scripts as `MockTransport`.
///
/// It binds an ephemeral port (port 0, read back with `getsockname`), runs one thread per
/// connection with keep-alive, answers GET and HEAD with `MockResponsePlan` (so it sends what
/// the in-memory transport would), and carries out the faults for real: a drop closes the
/// socket mid-body, extra bytes are really sent, a stall keeps the socket open and silent,
/// latency and throughput are real sleeps on the server's threads. Every request is logged in
/// ``routes``' request log with its URL rebuilt from the `Host` header.
///
/// ``start()`` before use, ``stop()`` after: it closes every socket and joins every thread.
public final class LoopbackHTTPServer: Sendable {
    /// The routes served and the log of requests received.
    public let routes: MockServer

    private struct State {
        var isRunning = false
        var isStopping = false
        var listener: Int32 = -1
        var port = 0
        var wakeRead: Int32 = -1
        var wakeWrite: Int32 = -1
        var acceptThread: LoopbackThread?
        var connectionThreads: [LoopbackThread] = []
        var openConnections: Set<Int32> = []
        var acceptedCount = 0
    }

    private let state = Locked(State())

    /// Creates a server for `routes`; it listens only after ``start()``.
    public init(serving routes: MockServer) {
        self.routes = routes
    }

    deinit { stop() }

    /// The port listened on; 0 before ``start()``.
    public var port: Int { state.withLock { $0.port } }

    /// `http://127.0.0.1:<port>`, to put paths after.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The connections accepted since ``start()``: with keep-alive, fewer than the requests.
    public var acceptedConnectionCount: Int { state.withLock { $0.acceptedCount } }

    /// Binds 127.0.0.1 on a free port and starts accepting connections.
    ///
    /// - Throws: ``LoopbackServerError`` when a socket, the bind or a thread fails.
    /// - Precondition: the server is not running.
    public func start() throws(LoopbackServerError) {
        precondition(!state.withLock { $0.isRunning }, "the loopback server is already running")
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw .lastError("socket") }
        var wake: [Int32] = [-1, -1]
        do throws(LoopbackServerError) {
            var reuse: Int32 = 1
            _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw LoopbackServerError.lastError("bind to 127.0.0.1:0") }
            guard listen(listener, 64) == 0 else { throw LoopbackServerError.lastError("listen") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
            }
            guard named == 0 else { throw LoopbackServerError.lastError("getsockname") }
            guard pipe(&wake) == 0 else { throw LoopbackServerError.lastError("pipe") }
            for fd in wake { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            let port = Int(UInt16(bigEndian: address.sin_port))
            state.withLock { state in
                state = State()
                state.isRunning = true
                state.listener = listener
                state.port = port
                state.wakeRead = wake[0]
                state.wakeWrite = wake[1]
            }
            let wakeRead = wake[0]
            let thread = try LoopbackThread.spawn { [self] in acceptLoop(listener: listener, wake: wakeRead) }
            state.withLock { $0.acceptThread = thread }
        } catch {
            _ = close(listener)
            if wake[0] >= 0 { _ = close(wake[0]) }
            if wake[1] >= 0 { _ = close(wake[1]) }
            state.withLock { $0 = State() }
            throw error
        }
    }

    /// Stops accepting, closes every connection, wakes every sleeping thread and joins all of
    /// them. Safe to call twice, or on a server never started.
    public func stop() {
        let running: (accept: LoopbackThread?, wake: Int32)? = state.withLock { state in
            guard state.isRunning, !state.isStopping else { return nil }
            state.isStopping = true
            for fd in state.openConnections { _ = shutdown(fd, Int32(SHUT_RDWR)) }
            return (state.acceptThread, state.wakeWrite)
        }
        guard let running else { return }
        var byte: UInt8 = 1
        _ = write(running.wake, &byte, 1)
        running.accept?.join()
        // The accept thread has ended: no connection thread is added from here on.
        let threads = state.withLock { $0.connectionThreads }
        for thread in threads { thread.join() }
        state.withLock { state in
            _ = close(state.listener)
            _ = close(state.wakeRead)
            _ = close(state.wakeWrite)
            state = State()
        }
    }

    private func acceptLoop(listener: Int32, wake: Int32) {
        while true {
            var descriptors = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents != 0 else { continue }
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var noDelay: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            let accepted = state.withLock { state in
                guard !state.isStopping else { return false }
                state.openConnections.insert(fd)
                state.acceptedCount += 1
                return true
            }
            guard accepted else {
                _ = close(fd)
                return
            }
            let connection = LoopbackConnection(
                fd: fd, routes: routes, wake: wake, fallbackHost: "127.0.0.1:\(port)")
            do {
                let thread = try LoopbackThread.spawn { [self] in
                    connection.serve()
                    closeConnection(fd)
                }
                state.withLock { $0.connectionThreads.append(thread) }
            } catch {
                closeConnection(fd)
            }
        }
    }

    /// Closes a connection's socket under the lock, so that ``stop()`` never shuts down a
    /// descriptor number that was closed and reused.
    private func closeConnection(_ fd: Int32) {
        state.withLock { state in
            state.openConnections.remove(fd)
            _ = close(fd)
        }
    }
}
