import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A blocking HTTP/1.1 and WebSocket client on one connection to 127.0.0.1, written here so
/// that the tests talk to the service through nothing of its own. Reads time out after 20 s,
/// so a broken server fails a test instead of hanging it. Use from one thread at a time (it
/// may be handed to another once the first is done with it).
final class RPCTestClient: @unchecked Sendable {
    /// An HTTP response.
    struct Response {
        var status: Int
        var headers: [String: String]
        var bodyBytes: [UInt8]
        var body: String { String(decoding: bodyBytes, as: UTF8.self) }
    }

    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects; `receiveBuffer` sets the socket's receive buffer (so its TCP window) small.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError("socket failed") }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw ClientError("connect to port \(port) failed")
        }
    }

    deinit { close(fd) }

    struct ClientError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            // A socket with a timeout is interrupted by any signal (SIGCHLD from another test's
            // process), whatever SA_RESTART says.
            if sent < 0, errno == EINTR { continue }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads more bytes into the buffer; false at the end of the stream or a timeout.
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var count: Int
        repeat {
            count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        } while count < 0 && errno == EINTR  // see send(_:)
        guard count > 0 else { return false }
        buffer += chunk[0..<count]
        return true
    }

    private func take(_ count: Int) -> [UInt8]? {
        while buffer.count < count { if !fill() { return nil } }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }

    /// Reads a response head: status and headers (names lowercased).
    private func readHead() -> (Int, [String: String])? {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let range = findSubsequence(end) {
                let head = String(decoding: buffer[0..<range], as: UTF8.self)
                buffer.removeFirst(range + 4)
                let lines = head.components(separatedBy: "\r\n")
                let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                        .trimmingCharacters(in: .whitespaces)
                }
                return (status, headers)
            }
            if !fill() { return nil }
        }
    }

    private func findSubsequence(_ needle: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        for index in 0...(buffer.count - needle.count) where buffer[index] == needle[0] {
            if Array(buffer[index..<index + needle.count]) == needle { return index }
        }
        return nil
    }

    /// POSTs `body` to `/jsonrpc` (or another path) and reads the response (keep-alive).
    func post(_ body: String, path: String = "/jsonrpc", headers: [String: String] = [:]) throws -> Response {
        // A Host given in `headers` replaces the default one.
        let host = headers.first { $0.key.lowercased() == "host" }?.value ?? "127.0.0.1"
        var request = "POST \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\n"
        for (name, value) in headers where name.lowercased() != "host" { request += "\(name): \(value)\r\n" }
        request += "Content-Length: \(body.utf8.count)\r\n\r\n"
        send(Array(request.utf8) + Array(body.utf8))
        return try readResponse()
    }

    /// POSTs every body to `/jsonrpc` in one write (HTTP/1.1 pipelining), then reads as many
    /// responses.
    func postPipelined(_ bodies: [String]) throws -> [Response] {
        var bytes: [UInt8] = []
        for body in bodies {
            let head =
                "POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n"
            bytes += Array(head.utf8) + Array(body.utf8)
        }
        send(bytes)
        return try bodies.map { _ in try readResponse() }
    }

    /// Sends `bytes` in pieces of the given sizes (the last piece takes the rest), a moment
    /// apart, so that the server reads them in as many reads; then reads `responses` responses.
    func sendInPieces(_ bytes: [UInt8], sizes: [Int], responses: Int) throws -> [Response] {
        var offset = 0
        for size in sizes where offset < bytes.count {
            let end = min(bytes.count, offset + size)
            send(Array(bytes[offset..<end]))
            offset = end
            usleep(500)
        }
        if offset < bytes.count { send(Array(bytes[offset...])) }
        return try (0..<responses).map { _ in try readResponse() }
    }

    /// Sends a request with no body.
    func request(_ method: String, path: String = "/jsonrpc", headers: [String: String] = [:]) throws -> Response {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        send(Array((request + "Content-Length: 0\r\n\r\n").utf8))
        return try readResponse()
    }

    private func readResponse() throws -> Response {
        guard let (status, headers) = readHead() else { throw ClientError("no response head") }
        var body: [UInt8] = []
        if let length = headers["content-length"].flatMap({ Int($0) }) {
            guard let bytes = take(length) else { throw ClientError("short body") }
            body = bytes
        } else if headers["transfer-encoding"]?.lowercased() == "chunked" {
            while true {
                guard let size = readLine().flatMap({ Int($0, radix: 16) }) else { throw ClientError("bad chunk") }
                if size == 0 {
                    _ = readLine()
                    break
                }
                guard let bytes = take(size) else { throw ClientError("short chunk") }
                body += bytes
                _ = readLine()
            }
        }
        return Response(status: status, headers: headers, bodyBytes: body)
    }

    private func readLine() -> String? {
        while true {
            if let index = findSubsequence([13, 10]) {
                let line = String(decoding: buffer[0..<index], as: UTF8.self)
                buffer.removeFirst(index + 2)
                return line
            }
            if !fill() { return nil }
        }
    }

    // MARK: WebSocket

    /// Asks to upgrade to WebSocket; returns the status (101 when upgraded).
    func upgradeToWebSocket(path: String = "/jsonrpc", origin: String? = nil) -> Int {
        var request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let origin { request += "Origin: \(origin)\r\n" }
        send(Array((request + "\r\n").utf8))
        guard let (status, headers) = readHead() else { return 0 }
        if status != 101, let length = headers["content-length"].flatMap({ Int($0) }) { _ = take(length) }
        return status
    }

    /// Sends a masked text frame.
    func sendText(_ text: String) {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        send(frame)
    }

    /// Reads the next text message (answers pings); nil when the connection ends or times out.
    func receiveText() -> String? {
        var message: [UInt8] = []
        while true {
            guard let header = take(2) else { return nil }
            let opcode = header[0] & 0x0F
            let final = header[0] & 0x80 != 0
            var length = Int(header[1] & 0x7F)
            if length == 126 {
                guard let bytes = take(2) else { return nil }
                length = Int(bytes[0]) << 8 | Int(bytes[1])
            } else if length == 127 {
                guard let bytes = take(8) else { return nil }
                length = bytes.reduce(0) { $0 << 8 | Int($1) }
            }
            guard let payload = take(length) else { return nil }
            switch opcode {
            case 0x8: return nil
            case 0x9: send([0x8A, 0x80, 0, 0, 0, 0])
            case 0xA: break
            default:
                message += payload
                if final { return String(decoding: message, as: UTF8.self) }
            }
        }
    }
}
