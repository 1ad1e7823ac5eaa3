internal import CCurl
import PeregrineCore
import PeregrineTransport

#if canImport(Glibc)
    import Glibc
#endif

/// One transfer's state. Touched only on the driver thread (callbacks run there too), which is
/// what makes the unchecked `Sendable` sound: the object crosses threads once, in a command.
final class CurlTransfer: @unchecked Sendable {
    let id: TransferID
    let request: TransferRequest
    let sink: any TransferSink
    let events: @Sendable (TransferEvent) -> Void

    /// The driver's open sockets, to find this transfer's connection.
    var sockets: SocketRegistry?
    /// The easy handle while the transfer is in the multi handle.
    var easy: UnsafeMutableRawPointer?
    /// The request headers of the current hop; libcurl does not copy them.
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// Where libcurl writes its message for a failed transfer.
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))

    /// The URL of the current hop.
    private(set) var hop: DownloadURL
    /// Redirects followed so far.
    private(set) var redirectCount = 0
    /// Headers of the response being received.
    private var responseHeaders = HTTPHeaders()
    /// The head of the final response, once reported.
    private(set) var head: ResponseHead?
    /// The redirect to follow when this hop's (discarded) body has been read.
    private(set) var pendingRedirect: Redirect?
    private var pendingRedirectTarget: DownloadURL?
    /// Whether the body being received is a redirect's, to be thrown away.
    private var discardsBody = false
    /// Body length announced by the final response (nil for HEAD and when absent).
    private var expectedBodyLength: Int64?
    /// Body bytes written to the sink.
    private(set) var receivedBytes: Int64 = 0
    /// libcurl saw bytes beyond Content-Length.
    private(set) var sawExcessBytes = false
    /// Why the transfer was aborted from a callback, reported instead of libcurl's code.
    var failure: TransportError?

    var cancelRequested = false
    var pauseRequested = false
    var isPaused = false
    /// The transfer's standing with its request's bandwidth limiters.
    private var bandwidth: BandwidthAccount
    /// Until when (monotonic nanoseconds) the limiters hold the transfer back, if they do.
    private(set) var throttledUntil: UInt64?
    /// Whether libcurl holds the transfer paused for its limiters (the driver resumes it at
    /// ``throttledUntil``), apart from a pause the caller asked for.
    var isThrottled = false
    /// When a byte last arrived (of a header or the body), or the request was seen sent, or the
    /// transfer went on after a pause: what ``idleLimitNanoseconds`` counts from.
    var lastActivityNanoseconds: UInt64 = 0
    /// Whether libcurl has sent the request: before, the transfer waits for a connection (in
    /// libcurl's queue, or connecting under the connect timeout) and no byte is due.
    var requestSent = false
    private var isCompleted = false

    private let progressIntervalNanoseconds: UInt64
    private var lastProgressNanoseconds: UInt64 = 0
    private var lastReportedBytes: Int64 = -1

    init(
        id: TransferID,
        request: TransferRequest,
        sink: any TransferSink,
        events: @escaping @Sendable (TransferEvent) -> Void,
        progressInterval: Duration = .milliseconds(100)
    ) {
        self.id = id
        self.request = request
        self.sink = sink
        self.events = events
        self.hop = request.url
        bandwidth = BandwidthAccount(request.bandwidthLimiters)
        progressIntervalNanoseconds = UInt64(progressInterval.wholeMilliseconds) * 1_000_000
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        errorBuffer.deallocate()
        if let headerList { curl_slist_free_all(headerList) }
    }

    /// The offset in the sink of the next body byte.
    private var sinkOffset: Int64 { (request.range?.start ?? 0) + receivedBytes }

    /// libcurl's message for the last failure, if it wrote one.
    var curlMessage: String {
        let text = String(cString: errorBuffer)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    // MARK: Hops

    /// Builds the request header list for the current hop and returns it.
    func makeHeaderList() -> UnsafeMutablePointer<curl_slist>? {
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        for field in request.headersToSend(to: hop) where !field.value.isEmpty {
            headerList = curl_slist_append(headerList, "\(field.name): \(field.value)")
        }
        return headerList
    }

    /// Moves to the pending redirect's target; the caller re-adds the handle.
    func advanceToRedirect() -> Redirect? {
        guard let redirect = pendingRedirect, let target = pendingRedirectTarget else { return nil }
        redirectCount += 1
        hop = target
        pendingRedirect = nil
        pendingRedirectTarget = nil
        discardsBody = false
        responseHeaders = HTTPHeaders()
        errorBuffer[0] = 0
        return redirect
    }

    // MARK: Callbacks

    /// How long the transfer may go without a byte: the low-speed rule's duration when its speed
    /// is 1 byte/s — "no byte for N s", which the driver checks itself. libcurl judges its rule
    /// from a speed averaged over 5 s, so a burst before a stall would keep it above 1 byte/s
    /// for 5 s more.
    var idleLimitNanoseconds: UInt64? {
        guard let rule = request.timeouts.lowSpeed, rule.bytesPerSecond <= 1 else { return nil }
        return UInt64(max(rule.duration.wholeMilliseconds, 1)) * 1_000_000
    }

    /// Takes one header line from libcurl. Returns false to abort the transfer.
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        lastActivityNanoseconds = Self.monotonicNanoseconds()
        requestSent = true
        if line.starts(with: "HTTP/".utf8) {
            responseHeaders = HTTPHeaders()
            return true
        }
        if line.count <= 2, line.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) {
            return headersComplete()
        }
        // Trim the line end as bytes: in Swift "\r\n" is one Character, equal to neither "\r" nor "\n".
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        let text = Self.headerText(UnsafeRawBufferPointer(rebasing: line[..<end]))
        if let first = text.first, first == " " || first == "\t", let last = responseHeaders.fields.last {
            // An obsolete folded line continues the previous field.
            responseHeaders.replaceOrAdd(name: last.name, value: last.value + " " + text.trimmed)
        } else if let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")) {
            // Over the bytes: `firstIndex(of: Character)` cost ~4,000 instructions a line.
            responseHeaders.add(
                name: String(Substring(text.utf8[..<colon])),
                value: String(Substring(text.utf8[text.utf8.index(after: colon)...])).trimmed)
        }
        return true
    }

    /// A header line as text: UTF-8 when it is valid UTF-8, else ISO-8859-1, which HTTP/1.1
    /// headers were defined in and old servers still send (`filename="caf\u{E9}.txt"` as one
    /// byte 0xE9) — every byte a character, never a replacement character.
    static func headerText(_ bytes: UnsafeRawBufferPointer) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
        return String(scalars)
    }

    private func headersComplete() -> Bool {
        guard let easy else { return false }
        var status = 0
        _ = peregrine_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        if status < 200 {
            responseHeaders = HTTPHeaders()
            return true
        }
        if RedirectPolicy.isRedirect(status: status) {
            let target = responseHeaders["Location"].map { RedirectPolicy.resolve(location: $0, against: hop) }
            switch request.redirects.decide(from: hop, to: target, status: status, hopsSoFar: redirectCount) {
            case .follow(let next):
                pendingRedirect = Redirect(status: status, from: hop.string, to: next.string)
                pendingRedirectTarget = next
                discardsBody = true
                return true
            case .refuse(let error):
                failure = error
                return false
            }
        }
        var version = 0
        _ = peregrine_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        let response = ResponseHead(
            status: status,
            headers: responseHeaders,
            effectiveURL: hop.string,
            httpVersion: Self.versionName(version)
        )
        head = response
        events(.head(response))
        if cancelRequested { return false }
        guard response.isSuccess else {
            failure = TransportError(
                .httpStatus,
                "the server answered \(status) for \(hop)",
                httpStatus: status,
                url: hop.string
            )
            return false
        }
        if let range = request.range {
            if let refusal = request.rangeRefusal(of: response) {
                failure = TransportError(
                    .rangeNotHonoured,
                    "asked for \(range) and the server answered with \(refusal); nothing was appended",
                    httpStatus: status,
                    url: hop.string
                )
                return false
            }
        } else if status == 206 {
            failure = TransportError(
                .protocolViolation,
                "the server answered 206 to a request without a range",
                httpStatus: status,
                url: hop.string
            )
            return false
        }
        expectedBodyLength = request.method == .head ? nil : response.contentLength
        return true
    }

    /// Takes body bytes from libcurl. Returns the count consumed: anything else aborts,
    /// and `CURL_WRITEFUNC_PAUSE` pauses with the bytes kept by libcurl.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if discardsBody { return bytes.count }
        if cancelRequested || failure != nil || head == nil { return 0 }
        if pauseRequested {
            isPaused = true
            return peregrine_writefunc_pause()
        }
        if holdsBackForLimiters() {
            // libcurl keeps these bytes and delivers them again when the driver resumes it.
            isThrottled = true
            return peregrine_writefunc_pause()
        }
        do {
            try sink.write(bytes, at: sinkOffset)
        } catch {
            failure = Self.writeFailure(error, url: hop.string)
            return 0
        }
        receivedBytes += Int64(bytes.count)
        lastActivityNanoseconds = Self.monotonicNanoseconds()
        if bandwidth.isLimited {
            let wait = bandwidth.charge(bytes.count)
            if wait > .zero { throttledUntil = Self.monotonicNanoseconds() &+ Self.nanoseconds(wait) }
        }
        if receivedBytes == expectedBodyLength, connectionHasUnsolicitedBytes() {
            // Checked now, while the connection is still this transfer's: once libcurl reports the
            // end it may already have handed the connection to a waiting transfer.
            sawExcessBytes = true
        }
        let now = Self.monotonicNanoseconds()
        if now &- lastProgressNanoseconds >= progressIntervalNanoseconds {
            lastProgressNanoseconds = now
            reportProgress()
        }
        return bytes.count
    }

    /// Whether the limiters still hold the transfer back: until ``throttledUntil``, then for as long
    /// as they say at their current rates, at most ``BandwidthLimiter/recheckInterval`` at a time.
    private func holdsBackForLimiters() -> Bool {
        guard let until = throttledUntil else { return false }
        let now = Self.monotonicNanoseconds()
        if now < until { return true }
        let wait = bandwidth.remainingWait()
        guard wait > .zero else {
            throttledUntil = nil
            return false
        }
        throttledUntil = now &+ Self.nanoseconds(wait)
        return true
    }

    /// A limiter's wait in nanoseconds, at most ``BandwidthLimiter/recheckInterval``.
    private static func nanoseconds(_ wait: Duration) -> UInt64 {
        let capped = min(wait, BandwidthLimiter.recheckInterval)
        return UInt64(max(0, capped.components.seconds)) &* 1_000_000_000
            &+ UInt64(max(0, capped.components.attoseconds) / 1_000_000_000)
    }

    /// The smallest receive buffer worth using under the request's limiters: about a 32nd of a
    /// second at the lowest rate (16 KiB at least), so that one chunk is a small part of a window.
    var limitedBufferSize: Int? {
        let rates = bandwidth.limiters.compactMap { $0.limit?.bytesPerSecond }
        guard let lowest = rates.min() else { return nil }
        return Int(max(16 << 10, min(lowest / 32, Int64(Int32.max))))
    }

    /// Whether an HTTP/1.x connection holds bytes after a complete response: the server sent
    /// more than its Content-Length in a later packet than libcurl's last read. (Bytes that
    /// arrive later still are left to libcurl, which closes a connection found readable
    /// before reusing it.)
    /// Only plain http is checked: on TLS the socket may rightly hold records such as session tickets.
    func connectionHasUnsolicitedBytes() -> Bool {
        guard let easy, let sockets, hop.scheme == "http", let head, head.httpVersion.hasPrefix("1") else {
            return false
        }
        var localPort = 0
        guard peregrine_easy_getinfo_long(easy, CURLINFO_LOCAL_PORT, &localPort) == CURLE_OK,
            let socket = sockets.socket(localPort: localPort)
        else { return false }
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
    }

    /// Notes libcurl's informational text; the only one acted on is its report of extra bytes.
    func receiveDebugText(_ text: UnsafeRawBufferPointer) {
        if text.starts(with: "Excess found".utf8) { sawExcessBytes = true }
    }

    // MARK: Completion

    /// What a transfer that libcurl finished without error amounts to.
    func outcomeOfCleanFinish() -> Result<TransferSummary, TransportError> {
        guard let head else {
            return .failure(TransportError(.protocolViolation, "the server sent no response", url: hop.string))
        }
        if let expected = expectedBodyLength, receivedBytes != expected || sawExcessBytes {
            let detail = sawExcessBytes ? "more than the \(expected) announced" : "\(receivedBytes) of \(expected)"
            return .failure(
                TransportError(
                    sawExcessBytes ? .lengthMismatch : .connectionClosed,
                    "the body had \(detail) bytes (Content-Length)", url: hop.string)
            )
        }
        do {
            try sink.flush()
        } catch {
            return .failure(Self.writeFailure(error, url: hop.string))
        }
        return .success(TransferSummary(head: head, receivedBytes: receivedBytes, redirectCount: redirectCount))
    }

    /// Delivers the completion event once.
    func complete(_ result: Result<TransferSummary, TransportError>) {
        guard !isCompleted else { return }
        isCompleted = true
        if case .success = result { reportProgress() }
        events(.completed(result))
    }

    private func reportProgress() {
        guard receivedBytes != lastReportedBytes else { return }
        lastReportedBytes = receivedBytes
        events(.progress(TransferProgress(receivedBytes: receivedBytes, expectedBytes: expectedBodyLength)))
    }

    func emitRedirect(_ redirect: Redirect) { events(.redirected(redirect)) }

    private static func writeFailure(_ error: any Error, url: String) -> TransportError {
        let code = (error as? SinkWriteError)?.errno
        return TransportError(.writeFailed, "could not store the body: \(error)", url: url, errno: code)
    }

    private static func versionName(_ version: Int) -> String {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): "1.0"
        case Int(CURL_HTTP_VERSION_2_0): "2"
        case Int(CURL_HTTP_VERSION_3): "3"
        default: "1.1"
        }
    }

    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
