#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A minimal blocking WebSocket client (RFC 6455) over plain TCP, for `peregrine watch`: text
/// messages in and out, pings answered. `ws://` only — a service reached over TLS needs a
/// proxy in front anyway. Use from one thread at a time.
final class WebSocketConnection: @unchecked Sendable {
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to `url` (`http://` or `ws://`) and upgrades; throws a message on failure.
    init(url: URL) throws {
        guard let host = url.host, ["http", "ws"].contains(url.scheme ?? "") else {
            throw ExitError(status: 2, message: "watch needs an http:// or ws:// service URL, not \(url)")
        }
        let port = url.port ?? 80
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw ExitError(status: 2, message: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        var connected: Int32 = -1
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry, connected < 0 {
            let candidate = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            if candidate >= 0, connect(candidate, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                connected = candidate
            } else if candidate >= 0 {
                close(candidate)
            }
            entry = current.pointee.ai_next
        }
        guard connected >= 0 else { throw ExitError(status: 2, message: "cannot reach the service at \(url)") }
        fd = connected
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let path = url.path.isEmpty ? "/jsonrpc" : url.path
        let request =
            "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        send(Array(request.utf8))
        guard let head = readHead(), head.hasPrefix("HTTP/1.1 101") else {
            close(fd)
            throw ExitError(status: 2, message: "the service at \(url) refused the WebSocket upgrade")
        }
    }

    deinit { close(fd) }

    /// Sends one masked text frame.
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
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        send(frame)
    }

    /// The next text message; nil once the connection closed.
    func receiveText() -> String? {
        var message: [UInt8] = []
        while true {
            guard let header = take(2) else { return nil }
            var length = Int(header[1] & 0x7F)
            if length == 126 {
                guard let bytes = take(2) else { return nil }
                length = Int(bytes[0]) << 8 | Int(bytes[1])
            } else if length == 127 {
                guard let bytes = take(8) else { return nil }
                length = bytes.reduce(0) { $0 << 8 | Int($1) }
            }
            guard length <= 64 << 20 else { return nil }
            let masked = header[1] & 0x80 != 0
            let mask = masked ? take(4) ?? [0, 0, 0, 0] : [0, 0, 0, 0]
            guard var payload = take(length) else { return nil }
            if masked { payload = payload.enumerated().map { $0.element ^ mask[$0.offset % 4] } }
            switch header[0] & 0x0F {
            case 0x8: return nil
            case 0x9: sendControl(0xA, payload)
            case 0xA: break
            default:
                message += payload
                if header[0] & 0x80 != 0 { return String(decoding: message, as: UTF8.self) }
            }
        }
    }

    private func sendControl(_ opcode: UInt8, _ payload: [UInt8]) {
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        send(
            [0x80 | opcode, 0x80 | UInt8(min(125, payload.count))] + mask
                + payload.prefix(125).enumerated().map { $0.element ^ mask[$0.offset % 4] })
    }

    private func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }  // a signal, not the end
            if sent <= 0 { return }
            offset += sent
        }
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var count: Int
        repeat {
            count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        } while count < 0 && errno == EINTR
        guard count > 0 else { return false }
        buffer += chunk[0..<count]
        return true
    }

    private func take(_ count: Int) -> [UInt8]? {
        while buffer.count < count { if !fill() { return nil } }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }

    private func readHead() -> String? {
        while true {
            if let end = (0..<max(0, buffer.count - 3)).first(where: {
                buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10
            }) {
                defer { buffer.removeFirst(end + 4) }
                return String(decoding: buffer[0..<end], as: UTF8.self)
            }
            if !fill() { return nil }
        }
    }
}
