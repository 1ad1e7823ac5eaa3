internal import CCurl
import Dispatch
import Logging
import PeregrineCore
import PeregrineTransport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Owns the multi handle and the thread that drives it.
///
/// Everything below `// MARK: Driver thread` runs only on that thread; other threads reach it
/// through ``submit(_:)``, which queues a command and wakes `curl_multi_poll`.
final class CurlDriver: @unchecked Sendable {
    private struct Inbox {
        var commands: [CurlCommand] = []
        var isShuttingDown = false
    }

    private let configuration: CurlTransport.Configuration
    private let multi: UnsafeMutableRawPointer
    private let inbox = Locked(Inbox())
    private let threadID = Atomic<UInt>(0)
    private let exited = DispatchSemaphore(value: 0)
    private let hasExited = Atomic<Bool>(false)

    // Driver-thread state.
    private var active: [TransferID: CurlTransfer] = [:]
    private var idleHandles: [UnsafeMutableRawPointer] = []
    /// The cookie store every easy handle shares, when cookies are on.
    private var cookies: UnsafeMutableRawPointer?
    private let sockets = SocketRegistry()

    init(configuration: CurlTransport.Configuration) {
        CurlLibrary.initializeOnce()
        self.configuration = configuration
        multi = curl_multi_init()
        _ = peregrine_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(configuration.maxConnections, 1))
        _ = peregrine_multi_setopt_long(
            multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(configuration.maxConnectionsPerHost, 0))
        _ = peregrine_multi_setopt_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
        // The thread holds the driver until its loop ends, so the driver outlives every callback.
        var thread = pthread_t()
        let started = pthread_create(
            &thread,
            nil,
            { argument in
                let driver = Unmanaged<CurlDriver>.fromOpaque(argument!).takeRetainedValue()
                peregrine_set_thread_name("peregrine.curl")
                driver.run()
                return nil
            },
            Unmanaged.passRetained(self).toOpaque()
        )
        precondition(started == 0, "cannot start the libcurl thread: error \(started)")
        pthread_detach(thread)
    }

    deinit {
        shutdown()
        for handle in idleHandles { curl_easy_cleanup(handle) }
        if let cookies { curl_share_cleanup(cookies) }
        curl_multi_cleanup(multi)
    }

    private var isOnDriverThread: Bool { threadID.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Queues a command for the driver thread.
    ///
    /// On the driver thread itself (from an event handler), pause and cancel also take effect at
    /// once, so that not one more byte reaches the sink.
    func submit(_ command: CurlCommand) {
        if isOnDriverThread {
            switch command {
            case .pause(let id): active[id]?.pauseRequested = true
            case .resume(let id): active[id]?.pauseRequested = false
            case .cancel(let id): active[id]?.cancelRequested = true
            case .start: break
            }
        }
        let accepted = inbox.withLock { inbox in
            guard !inbox.isShuttingDown else { return false }
            inbox.commands.append(command)
            return true
        }
        if accepted {
            curl_multi_wakeup(multi)
        } else if case .start(let transfer) = command {
            transfer.complete(.failure(Self.cancelled(transfer, because: "the transport was shut down")))
        }
    }

    /// Cancels everything, then stops and joins the thread. Safe to call more than once.
    func shutdown() {
        let first = inbox.withLock { inbox in
            defer { inbox.isShuttingDown = true }
            return !inbox.isShuttingDown
        }
        if first {
            curl_multi_wakeup(multi)
        }
        guard !isOnDriverThread else { return }
        if !hasExited.load(ordering: .acquiring) {
            exited.wait()
            exited.signal()
        }
    }

    // MARK: Driver thread

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        startCookies()
        while true {
            let (commands, stopping) = inbox.withLock { inbox in
                defer { inbox.commands.removeAll(keepingCapacity: true) }
                return (inbox.commands, inbox.isShuttingDown)
            }
            for command in commands { handle(command) }
            if stopping {
                for transfer in Array(active.values) {
                    finish(transfer, .failure(Self.cancelled(transfer, because: "the transport was shut down")))
                }
                break
            }
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            collectFinishedTransfers()
            _ = curl_multi_poll(multi, nil, 0, pollTimeoutMilliseconds(), nil)
            resumeThrottledTransfers()
            abortIdleTransfers()
        }
        // Before the shutdown that waits for the thread returns: a caller may read the jar next.
        saveCookies()
        hasExited.store(true, ordering: .releasing)
        exited.signal()
    }

    /// Makes the shared cookie store and reads the cookie file into it, when cookies are on.
    private func startCookies() {
        guard configuration.cookieFile != nil || configuration.cookieJar != nil else { return }
        guard let share = peregrine_share_cookies() else {
            configuration.logger.error("libcurl cannot share cookies: cookies are off")
            return
        }
        cookies = share
        guard let file = configuration.cookieFile, let easy = curl_easy_init() else { return }
        defer { curl_easy_cleanup(easy) }
        _ = peregrine_easy_setopt_pointer(easy, CURLOPT_SHARE, UnsafeRawPointer(share))
        _ = peregrine_easy_setopt_string(easy, CURLOPT_COOKIEFILE, file)
        _ = peregrine_easy_setopt_string(easy, CURLOPT_COOKIELIST, "RELOAD")
    }

    /// Writes the cookie store to the cookie jar, readable by its owner only.
    private func saveCookies() {
        guard let share = cookies, let jar = configuration.cookieJar, let easy = curl_easy_init() else { return }
        // Made private before libcurl writes the cookies into it.
        let descriptor = open(jar, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            fchmod(descriptor, 0o600)
            close(descriptor)
        }
        _ = peregrine_easy_setopt_pointer(easy, CURLOPT_SHARE, UnsafeRawPointer(share))
        _ = peregrine_easy_setopt_string(easy, CURLOPT_COOKIEJAR, jar)
        _ = peregrine_easy_setopt_string(easy, CURLOPT_COOKIELIST, "FLUSH")
        curl_easy_cleanup(easy)
        chmod(jar, 0o600)
    }

    /// How long the poll may wait: a second, or until the first transfer that its limiters hold
    /// back may go on, or the first that may go without a byte runs out of time.
    private func pollTimeoutMilliseconds() -> Int32 {
        var earliest: UInt64?
        for transfer in active.values {
            if transfer.isThrottled, let until = transfer.throttledUntil { earliest = min(earliest ?? until, until) }
            if let deadline = idleDeadline(of: transfer) { earliest = min(earliest ?? deadline, deadline) }
        }
        guard let earliest else { return 1000 }
        let now = CurlTransfer.monotonicNanoseconds()
        guard earliest > now else { return 0 }
        return Int32(min(1000, (earliest - now + 999_999) / 1_000_000))
    }

    /// Resumes the transfers whose limiters' wait is over (the write callback asks them again and
    /// pauses once more if a lowered limit says so). One paused by the caller stays paused.
    private func resumeThrottledTransfers() {
        let now = CurlTransfer.monotonicNanoseconds()
        var due: [CurlTransfer] = []
        for transfer in active.values where transfer.isThrottled && (transfer.throttledUntil ?? 0) <= now {
            due.append(transfer)
        }
        for transfer in due {
            transfer.isThrottled = false
            transfer.lastActivityNanoseconds = now
            guard !transfer.isPaused, !transfer.pauseRequested, let easy = transfer.easy else { continue }
            // May deliver the bytes libcurl kept back, through the write callback, right here.
            _ = curl_easy_pause(easy, CURLPAUSE_CONT)
        }
    }

    /// When a transfer that may go without a byte for only so long (``CurlTransfer/idleLimitNanoseconds``)
    /// runs out of time; nil while it is paused or held back by its limiters (no byte is asked for).
    private func idleDeadline(of transfer: CurlTransfer) -> UInt64? {
        guard let limit = transfer.idleLimitNanoseconds, !transfer.isPaused, !transfer.isThrottled,
            !transfer.pauseRequested
        else { return nil }
        return transfer.lastActivityNanoseconds &+ limit
    }

    /// Ends the transfers that went without a byte for their limit since their request was sent,
    /// as too slow.
    private func abortIdleTransfers() {
        let now = CurlTransfer.monotonicNanoseconds()
        var idle: [CurlTransfer] = []
        for transfer in active.values {
            guard let deadline = idleDeadline(of: transfer), deadline <= now else { continue }
            if !transfer.requestSent {
                // Still waiting for a connection: the clock starts once the request is out (seen
                // here, at most a poll's wait late).
                guard let easy = transfer.easy else { continue }
                var sent: curl_off_t = 0
                _ = peregrine_easy_getinfo_offset(easy, CURLINFO_PRETRANSFER_TIME_T, &sent)
                transfer.lastActivityNanoseconds = now
                transfer.requestSent = sent > 0
                continue
            }
            idle.append(transfer)
        }
        for transfer in idle {
            let limit = Duration.nanoseconds(Int64(transfer.idleLimitNanoseconds ?? 0))
            finish(
                transfer,
                .failure(
                    TransportError(.tooSlow, "no byte arrived for \(limit)", url: transfer.hop.string)))
        }
    }

    private func handle(_ command: CurlCommand) {
        switch command {
        case .start(let transfer):
            begin(transfer)
        case .pause(let id):
            guard let transfer = active[id], let easy = transfer.easy else { return }
            transfer.pauseRequested = true
            if !transfer.isPaused {
                transfer.isPaused = true
                _ = curl_easy_pause(easy, CURLPAUSE_RECV)
            }
        case .resume(let id):
            guard let transfer = active[id], let easy = transfer.easy else { return }
            transfer.pauseRequested = false
            transfer.lastActivityNanoseconds = CurlTransfer.monotonicNanoseconds()
            if transfer.isPaused {
                transfer.isPaused = false
                // May deliver the bytes libcurl kept back, through the write callback, right here.
                _ = curl_easy_pause(easy, CURLPAUSE_CONT)
            }
        case .cancel(let id):
            guard let transfer = active[id] else { return }
            transfer.cancelRequested = true
            finish(transfer, .failure(Self.cancelled(transfer, because: "cancelled by the caller")))
        }
    }

    private func begin(_ transfer: CurlTransfer) {
        if let credentials = transfer.request.credentials, !credentials.isAllowed(for: transfer.request.url) {
            transfer.complete(
                .failure(
                    TransportError(
                        .invalidRequest,
                        "refused to send credentials over plain http to \(transfer.request.url.host); "
                            + "allow it for this host if that is intended",
                        url: transfer.request.url.string
                    )
                )
            )
            return
        }
        let easy = idleHandles.popLast() ?? curl_easy_init()!
        transfer.easy = easy
        transfer.lastActivityNanoseconds = CurlTransfer.monotonicNanoseconds()
        transfer.sockets = sockets
        active[transfer.id] = transfer
        if let refused = configure(easy, for: transfer) {
            finish(transfer, .failure(refused))
            return
        }
        configuration.logger.debug("start \(transfer.id) \(transfer.request.method.rawValue) \(transfer.request.url)")
        _ = curl_multi_add_handle(multi, easy)
    }

    private func collectFinishedTransfers() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var pointer: UnsafeMutableRawPointer?
            _ = peregrine_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer)
            guard let pointer else { continue }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(pointer).takeUnretainedValue()
            transferFinished(transfer, code: code)
        }
    }

    private func transferFinished(_ transfer: CurlTransfer, code: CURLcode) {
        if transfer.cancelRequested {
            finish(transfer, .failure(Self.cancelled(transfer, because: "cancelled by the caller")))
        } else if let failure = transfer.failure {
            finish(transfer, .failure(failure))
        } else if code != CURLE_OK {
            finish(transfer, .failure(CurlErrorMapping.error(for: code, transfer: transfer)))
        } else if let redirect = transfer.advanceToRedirect(), let easy = transfer.easy {
            transfer.emitRedirect(redirect)
            _ = curl_multi_remove_handle(multi, easy)
            if transfer.cancelRequested {
                finish(transfer, .failure(Self.cancelled(transfer, because: "cancelled by the caller")))
                return
            }
            if let refused = configureHop(easy, for: transfer) {
                finish(transfer, .failure(refused))
                return
            }
            // The next hop waits for its connection before a byte is due again.
            transfer.requestSent = false
            transfer.lastActivityNanoseconds = CurlTransfer.monotonicNanoseconds()
            _ = curl_multi_add_handle(multi, easy)
        } else {
            finish(transfer, transfer.outcomeOfCleanFinish())
        }
    }

    /// Takes the transfer out of the multi handle, recycles its easy handle and reports the end.
    private func finish(_ transfer: CurlTransfer, _ result: Result<TransferSummary, TransportError>) {
        if let easy = transfer.easy {
            _ = curl_multi_remove_handle(multi, easy)
            curl_easy_reset(easy)
            idleHandles.append(easy)
            transfer.easy = nil
        }
        active[transfer.id] = nil
        switch result {
        case .success(let summary):
            configuration.logger.debug("done \(transfer.id): \(summary.head.status), \(summary.receivedBytes) bytes")
        case .failure(let error):
            configuration.logger.debug("failed \(transfer.id): \(error)")
        }
        transfer.complete(result)
    }

    // MARK: Options

    /// Sets every option of a transfer; returns the error that ends it before it starts when
    /// its trust policy cannot be applied.
    private func configure(_ easy: UnsafeMutableRawPointer, for transfer: CurlTransfer) -> TransportError? {
        let request = transfer.request
        let user = Unmanaged.passUnretained(transfer).toOpaque()
        _ = peregrine_easy_setopt_pointer(easy, CURLOPT_PRIVATE, user)
        _ = peregrine_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        _ = peregrine_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = peregrine_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)
        _ = peregrine_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = peregrine_easy_setopt_long(
            easy, CURLOPT_BUFFERSIZE, min(configuration.receiveBufferSize, transfer.limitedBufferSize ?? Int.max))
        _ = peregrine_easy_setopt_long(
            easy,
            CURLOPT_HTTP_VERSION,
            Int(configuration.prefersHTTP2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1)
        )
        _ = peregrine_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        _ = peregrine_easy_setopt_string(easy, CURLOPT_USERAGENT, configuration.userAgent)
        if let cookies {
            _ = peregrine_easy_setopt_pointer(easy, CURLOPT_SHARE, UnsafeRawPointer(cookies))
            // An empty name turns the cookie engine on without reading a file.
            _ = peregrine_easy_setopt_string(easy, CURLOPT_COOKIEFILE, "")
        }
        _ = peregrine_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(request.timeouts.connect.wholeMilliseconds))
        if let lowSpeed = request.timeouts.lowSpeed {
            _ = peregrine_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, max(lowSpeed.bytesPerSecond, 1))
            _ = peregrine_easy_setopt_long(
                easy,
                CURLOPT_LOW_SPEED_TIME,
                Int(max((lowSpeed.duration.wholeMilliseconds + 999) / 1000, 1))
            )
        }
        if let proxy = request.proxy {
            _ = peregrine_easy_setopt_string(easy, CURLOPT_PROXY, proxy)
        }
        if let cap = request.maxReceiveBytesPerSecond, cap > 0 {
            _ = peregrine_easy_setopt_offset(easy, CURLOPT_MAX_RECV_SPEED_LARGE, curl_off_t(cap))
        }
        _ = peregrine_easy_setopt_socket_callbacks(
            easy,
            { user, _, address in
                let socket = peregrine_open_socket(address)
                if socket >= 0 { Unmanaged<SocketRegistry>.fromOpaque(user!).takeUnretainedValue().opened(socket) }
                return socket
            },
            { user, socket in
                Unmanaged<SocketRegistry>.fromOpaque(user!).takeUnretainedValue().closed(socket)
                return Glibc.close(socket)
            },
            Unmanaged.passUnretained(sockets).toOpaque()
        )

        _ = peregrine_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, user in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(user!).takeUnretainedValue()
            return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
        }
        _ = peregrine_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, user)
        _ = peregrine_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, user in
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(user!).takeUnretainedValue()
            let total = size * count
            return transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: total)) ? total : 0
        }
        _ = peregrine_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, user)
        // libcurl reports bytes beyond Content-Length only as informational text.
        _ = peregrine_easy_setopt_long(easy, CURLOPT_VERBOSE, 1)
        _ = peregrine_easy_setopt_debug_callback(easy) { _, type, data, size, user in
            if type == CURLINFO_TEXT, let data {
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(user!).takeUnretainedValue()
                transfer.receiveDebugText(UnsafeRawBufferPointer(start: data, count: size))
            }
            return 0
        }
        _ = peregrine_easy_setopt_pointer(easy, CURLOPT_DEBUGDATA, user)
        return configureHop(easy, for: transfer)
    }

    /// Sets what changes from one hop to the next: the URL, the method, the headers and the trust
    /// policy of the hop's host.
    ///
    /// Runs before the handle is (re)added to the multi handle, so a redirect target is checked
    /// under its own host's policy from its first connection on.
    private func configureHop(_ easy: UnsafeMutableRawPointer, for transfer: CurlTransfer) -> TransportError? {
        let hop = transfer.hop
        if let refused = applyTrust(transfer.request.trust(for: hop), for: hop, to: easy) {
            return TransportError(.tls, "\(refused); the transfer was not started", url: hop.string)
        }
        _ = peregrine_easy_setopt_string(easy, CURLOPT_URL, hop.string)
        // Waiting for a connection to show whether it multiplexes pays only where HTTP/2 can
        // follow (TLS). Over plain http libcurl would park transfers that start together until
        // another transfer ends and returns its connection: under a shared speed limit, seconds
        // in which the first few take all of it.
        _ = peregrine_easy_setopt_long(
            easy, CURLOPT_PIPEWAIT, hop.scheme == "https" && configuration.prefersHTTP2 ? 1 : 0)
        if transfer.request.method == .head {
            _ = peregrine_easy_setopt_long(easy, CURLOPT_NOBODY, 1)
        } else {
            _ = peregrine_easy_setopt_long(easy, CURLOPT_HTTPGET, 1)
        }
        _ = peregrine_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, transfer.makeHeaderList())
        return nil
    }

    /// Sets every trust option, those the policy leaves alone back to libcurl's defaults: the easy
    /// handle keeps its options from one hop to the next, and the previous hop may have been to
    /// another host with its own CA file, pins or `insecure` opt-out.
    ///
    /// Fails closed: returns what went wrong when libcurl refuses an option that makes the check
    /// stricter (a CA file, pins — e.g. a libcurl built without pinning), so that such a transfer
    /// never runs with weaker checks than its policy asks for.
    private func applyTrust(_ trust: TrustPolicy, for hop: DownloadURL, to easy: UnsafeMutableRawPointer) -> String? {
        if trust.isInsecure {
            configuration.logger.warning("TLS certificate checks are off for \(hop.host) (insecure trust policy)")
        }
        func refused(_ code: CURLcode, _ what: String) -> String? {
            code == CURLE_OK
                ? nil : "libcurl refused \(what) for \(hop.host): \(String(cString: curl_easy_strerror(code)))"
        }
        if let error = refused(
            peregrine_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, trust.isInsecure ? 0 : 1), "certificate checks")
        {
            return error
        }
        if let error = refused(
            peregrine_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, trust.isInsecure ? 0 : 2), "host name checks")
        {
            return error
        }
        switch trust.authorities {
        case .system:
            let defaults = CurlLibrary.defaultAuthorities
            _ = peregrine_easy_setopt_string(easy, CURLOPT_CAINFO, defaults.file)
            _ = peregrine_easy_setopt_string(easy, CURLOPT_CAPATH, defaults.directory)
        case .file(let path):
            // Only this file: no system directory beside it.
            if let error = refused(peregrine_easy_setopt_string(easy, CURLOPT_CAINFO, path), "the CA file \(path)") {
                return error
            }
            _ = peregrine_easy_setopt_pointer(easy, CURLOPT_CAPATH, nil)
        }
        if trust.isInsecure || trust.pinnedPublicKeySHA256.isEmpty {
            _ = peregrine_easy_setopt_pointer(easy, CURLOPT_PINNEDPUBLICKEY, nil)
        } else {
            let pins = trust.pinnedPublicKeySHA256.map { $0.hasPrefix("sha256//") ? $0 : "sha256//\($0)" }
            let code = peregrine_easy_setopt_string(easy, CURLOPT_PINNEDPUBLICKEY, pins.joined(separator: ";"))
            if let error = refused(code, "public-key pinning") { return error }
        }
        return nil
    }

    private static func cancelled(_ transfer: CurlTransfer, because reason: String) -> TransportError {
        TransportError(.cancelled, reason, url: transfer.hop.string)
    }
}

/// libcurl's process-wide set-up, done once.
enum CurlLibrary {
    /// Where libcurl finds CA certificates unless told otherwise.
    struct Authorities: Sendable {
        /// The CA bundle (`CURLOPT_CAINFO`), or nil when libcurl was built without one.
        var file: String?
        /// The CA directory (`CURLOPT_CAPATH`), or nil when libcurl was built without one.
        var directory: String?
    }

    /// libcurl's built-in CA file and directory, read once from a fresh handle, so that a hop under
    /// the system's CAs can restore them after a hop that named its own file.
    static let defaultAuthorities: Authorities = {
        initializeOnce()
        guard let easy = curl_easy_init() else { return Authorities() }
        defer { curl_easy_cleanup(easy) }
        var file: UnsafeMutablePointer<CChar>?
        var directory: UnsafeMutablePointer<CChar>?
        _ = peregrine_easy_getinfo_string(easy, CURLINFO_CAINFO, &file)
        _ = peregrine_easy_getinfo_string(easy, CURLINFO_CAPATH, &directory)
        return Authorities(file: file.map { String(cString: $0) }, directory: directory.map { String(cString: $0) })
    }()

    static func initializeOnce() { _ = initialized }
    private static let initialized: Bool = {
        _ = peregrine_openssl_init_no_atexit()
        return curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()
}
