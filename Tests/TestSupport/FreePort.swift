#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// TCP ports on the loopback address 127.0.0.1: picking an unused one and probing one.
public enum FreePort {
    /// A TCP port on 127.0.0.1 that nothing is bound to right now.
    ///
    /// Binds port 0, reads the port the kernel chose and closes the socket. Another process may
    /// take the port before the caller binds it, so a server started on it must retry with a new
    /// port when its bind fails (``NginxServer`` does).
    ///
    /// - Throws: ``SocketError`` when no socket can be bound.
    public static func pick() throws(SocketError) -> Int {
        let fd = try openSocket()
        defer { _ = close(fd) }
        var address = loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw SocketError.fromErrno("bind to 127.0.0.1:0") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw SocketError.fromErrno("getsockname") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1 at `port` right now.
    ///
    /// Connects and closes at once; a connect on loopback is answered immediately (accepted or
    /// refused), so this does not block for long.
    public static func isAccepting(_ port: Int) -> Bool {
        guard let fd = try? openSocket() else { return false }
        defer { _ = close(fd) }
        var address = loopbackAddress(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return connected == 0
    }

    private static func openSocket() throws(SocketError) -> Int32 {
        #if canImport(Darwin)
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #endif
        guard fd >= 0 else { throw SocketError.fromErrno("socket") }
        return fd
    }

    private static func loopbackAddress(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// A socket call failed.
    public struct SocketError: Error, Sendable, CustomStringConvertible {
        /// The failed call and the system's reason.
        public var message: String
        public var description: String { message }

        static func fromErrno(_ call: String) -> SocketError {
            let code = errno
            return SocketError(message: "\(call) failed: \(String(cString: strerror(code)))")
        }
    }
}
