import PeregrineCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A minimal blocking HTTP/1.1 client on one connection to 127.0.0.1, to test
/// ``LoopbackHTTPServer`` byte for byte without a transport in between.
///
/// Not thread-safe: use it from one thread. Reads time out after 10 s, so a broken server
/// fails a test instead of hanging it.
public final class LoopbackHTTPClient {
    /// A response as read from the socket.
    public struct Response: Sendable, Hashable {
        /// The head exactly as received, status line to blank line.
        public var headText: String
        /// The status code.
        public var status: Int
        /// The headers.
        public var headers: HTTPHeaders
        /// The body bytes received (at most `Content-Length`).
        public var body: [UInt8]
        /// Whether the connection ended before `Content-Length` bytes arrived.
        public var endedEarly: Bool
    }

    private let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port`.
    public init(port: Int) throws(LoopbackServerError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .lastError("socket") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let error = LoopbackServerError.lastError("connect to 127.0.0.1:\(port)")
            _ = closeSocket(fd)
            throw error
        }
        self.fd = fd
    }

    deinit { _ = closeSocket(fd) }

    /// Sends raw bytes.
    public func sendRaw(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// Sends a request with a `Host` header and `extraHeaders`.
    public func sendRequest(_ method: String, _ target: String, host: String = "127.0.0.1", extraHeaders: String = "") {
        sendRaw("\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n\(extraHeaders)\r\n")
    }

    /// Reads one response; for the answer to a HEAD, pass `expectsBody: false`.
    ///
    /// - Returns: nil when the connection ended or timed out before a complete head.
    public func readResponse(expectsBody: Bool = true) -> Response? {
        guard var response = readHead() else { return nil }
        let length = expectsBody ? Int(response.headers["Content-Length"] ?? "0") ?? 0 : 0
        response.body = readBytes(length)
        response.endedEarly = response.body.count < length
        return response
    }

    /// Reads a response head only, leaving the body to ``readBytes(_:)``.
    public func readHead() -> Response? {
        var end = headEnd()
        while end == nil {
            guard fill() else { return nil }
            end = headEnd()
        }
        let headText = String(decoding: pending[..<(end! + 4)], as: UTF8.self)
        pending.removeSubrange(..<(end! + 4))
        let lines = headText.split(separator: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(
                name: String(line[..<colon]), value: String(line[line.index(after: colon)...].drop { $0 == " " }))
        }
        return Response(headText: headText, status: status, headers: headers, body: [], endedEarly: false)
    }

    /// Reads `count` bytes, or fewer when the connection ends (or 10 s pass) first.
    public func readBytes(_ count: Int) -> [UInt8] {
        while pending.count < count, fill() {}
        let available = min(count, pending.count)
        defer { pending.removeSubrange(..<available) }
        return Array(pending[..<available])
    }

    /// Reads until the server closes the connection (or 10 s pass) and returns what came
    /// after the last response read.
    public func readToEnd() -> [UInt8] {
        while fill() {}
        defer { pending.removeAll() }
        return pending
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                pending.append(contentsOf: chunk[..<count])
                return true
            }
            if count < 0, errno == EINTR { continue }
            return false
        }
    }

    private func headEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for index in 0...(pending.count - 4)
        where pending[index] == 13 && pending[index + 1] == 10 && pending[index + 2] == 13 && pending[index + 3] == 10 {
            return index
        }
        return nil
    }
}

private func closeSocket(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.close(fd)
    #else
        Musl.close(fd)
    #endif
}
