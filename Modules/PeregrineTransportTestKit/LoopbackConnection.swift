import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One accepted connection of a ``LoopbackHTTPServer``: reads requests and sends the planned
/// responses, keep-alive, until the peer closes, a fault closes, or the server stops.
struct LoopbackConnection: Sendable {
    let fd: Int32
    let routes: MockServer
    /// The server's wake pipe: readable once the server stops; every wait watches it.
    let wake: Int32
    /// The `Host` used to rebuild the URL when a request has none.
    let fallbackHost: String

    private static let maxHeadBytes = 64 << 10

    /// A parsed request head.
    private struct RequestHead {
        var method: String
        var target: String
        var version: String
        var headers: HTTPHeaders

        var wantsClose: Bool {
            let connection = headers["Connection"]?.lowercased() ?? ""
            return connection.contains("close") || (version == "HTTP/1.0" && !connection.contains("keep-alive"))
        }
    }

    /// Serves requests until the connection ends. The caller closes the socket.
    func serve() {
        var pending: [UInt8] = []
        while let head = readRequest(&pending) {
            let host = head.headers["Host"] ?? fallbackHost
            let url = head.target.hasPrefix("http://") ? head.target : "http://\(host)\(head.target)"
            let plan = routes.respond(to: MockRequest(method: head.method, url: url, headers: head.headers))
            guard wait(for: plan.latency) else { return }
            guard sendAll(Array(plan.headText.utf8)) else { return }
            guard sendBody(of: plan) else { return }
            if plan.closesConnection || head.wantsClose {
                _ = shutdown(fd, Int32(SHUT_WR))
                return
            }
            if case .stallAfter = plan.ending, plan.sendsBody {
                waitForPeerToClose()
                return
            }
        }
    }

    // MARK: Reading

    /// Reads the next request head (and discards a request body); nil when the connection ended
    /// or the request was unreadable (after answering 400).
    private func readRequest(_ pending: inout [UInt8]) -> RequestHead? {
        var end = Self.headEnd(in: pending)
        while end == nil {
            guard pending.count < Self.maxHeadBytes, receive(into: &pending) else { return nil }
            end = Self.headEnd(in: pending)
        }
        let headBytes = pending[..<end!]
        pending.removeSubrange(..<(end! + 4))
        let lines = String(decoding: headBytes, as: UTF8.self).split(
            separator: "\r\n", omittingEmptySubsequences: false)
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count == 3 else {
            _ = sendAll(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            return nil
        }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: [" ", "\t"])
            headers.add(name: name, value: value)
        }
        var head = RequestHead(
            method: String(parts[0]), target: String(parts[1]), version: String(parts[2]), headers: headers)
        if let length = headers["Content-Length"].flatMap({ Int($0) }), length > 0 {
            while pending.count < length {
                guard receive(into: &pending) else { return nil }
            }
            pending.removeSubrange(..<length)
        }
        if head.target.isEmpty { head.target = "/" }
        return head
    }

    private static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// Appends what the socket has to `bytes`; false at end of stream, on error, or on stop.
    private func receive(into bytes: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                bytes.append(contentsOf: chunk[0..<count])
                return true
            }
            if count < 0, errno == EINTR { continue }
            return false
        }
    }

    // MARK: Writing

    private func sendBody(of plan: MockResponsePlan) -> Bool {
        let total = plan.wireLength
        guard total > 0 else { return true }
        let sliceSize = plan.bytesPerSecond.map { Int(max(1024, min(64 << 10, $0 / 50))) } ?? (256 << 10)
        var buffer = [UInt8](repeating: 0, count: Int(min(Int64(sliceSize), total)))
        let start = ContinuousClock.now
        var sent: Int64 = 0
        while sent < total {
            let count = Int(min(Int64(buffer.count), total - sent))
            buffer.withUnsafeMutableBytes { plan.copyWireBytes(in: sent..<(sent + Int64(count)), into: $0) }
            guard sendAll(buffer[0..<count]) else { return false }
            sent += Int64(count)
            if let rate = plan.bytesPerSecond, sent < total {
                let due = start + .seconds(1) * sent / rate
                guard wait(for: due - ContinuousClock.now) else { return false }
            }
        }
        return true
    }

    private func sendAll(_ bytes: some Collection<UInt8>) -> Bool {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let count = array.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += count
        }
        return true
    }

    // MARK: Waiting

    /// Sleeps for `duration`; false when the server stopped meanwhile.
    private func wait(for duration: Duration) -> Bool {
        guard duration > .zero else { return !isStopping }
        let deadline = ContinuousClock.now + duration
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return !isStopping }
            var descriptor = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: left.wholeMilliseconds)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return false }
        }
    }

    private var isStopping: Bool {
        var descriptor = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// Blocks until the peer closes the connection or the server stops; what the peer sends
    /// meanwhile is ignored (a stalled server answers nothing more).
    private func waitForPeerToClose() {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            var descriptors = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { return }
            if descriptors[0].revents != 0 {
                let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return }
            }
        }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: [Character]) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}
