#if canImport(Glibc)
    import Glibc
#endif

/// The sockets libcurl has open, by local port: how a transfer finds its own connection while
/// libcurl still owns it. Driver thread only.
final class SocketRegistry {
    /// Open sockets and their local port, 0 until looked up.
    private var localPorts: [Int32: Int] = [:]

    func opened(_ socket: Int32) { localPorts[socket] = 0 }

    func closed(_ socket: Int32) { localPorts[socket] = nil }

    /// The open socket bound to this local port.
    func socket(localPort: Int) -> Int32? {
        if let match = localPorts.first(where: { $0.value == localPort }) { return match.key }
        for (socket, port) in localPorts where port == 0 {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let found = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
            }
            guard found == 0 else { continue }
            let bound = Self.port(of: address)
            localPorts[socket] = bound
            if bound == localPort { return socket }
        }
        return nil
    }

    private static func port(of address: sockaddr_storage) -> Int {
        var address = address
        let family = Int32(address.ss_family)
        return withUnsafePointer(to: &address) { pointer in
            switch family {
            case AF_INET:
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin_port))
                }
            case AF_INET6:
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            default:
                -1
            }
        }
    }
}
