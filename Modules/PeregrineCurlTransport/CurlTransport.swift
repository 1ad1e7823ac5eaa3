internal import CCurl
import Logging
import PeregrineTransport
import Synchronization

/// A `Transport` on libcurl's multi interface: one owned thread runs every transfer.
///
/// The thread waits in `curl_multi_poll`; calls from other threads queue a command and wake it
/// with `curl_multi_wakeup`. Connections are reused across transfers (`CURLMOPT_MAXCONNECTS`),
/// capped per host, and multiplexed over HTTP/2 when a TLS server offers it. Body bytes go
/// from libcurl's receive buffer straight to the sink, with no allocation per chunk.
///
/// Redirects are followed by the transport, not by libcurl, so that `RedirectPolicy` and
/// the credential rules of `TransferRequest.headersToSend(to:)` decide every hop.
///
/// Call ``shutdown()`` when done (it cancels what is running and joins the thread); the
/// transport also shuts down when released.
public final class CurlTransport: Transport {
    /// True: every transfer's events arrive on the one thread that drives libcurl.
    public var eventsShareOneThread: Bool { true }

    /// Settings that hold for every transfer of a transport.
    public struct Configuration: Sendable {
        /// Connections kept open for reuse; at least the number of concurrent transfers.
        public var maxConnections: Int
        /// Connections to one host at a time; 0 for no cap.
        public var maxConnectionsPerHost: Int
        /// libcurl's receive buffer per transfer (`CURLOPT_BUFFERSIZE`), up to 512 KiB.
        public var receiveBufferSize: Int
        /// Whether to use HTTP/2 with TLS servers that offer it.
        public var prefersHTTP2: Bool
        /// The least time between two progress events of one transfer.
        public var progressInterval: Duration
        /// The `User-Agent` header.
        public var userAgent: String
        /// Where the transport logs (transfer starts and ends at debug level).
        public var logger: Logger
        /// A cookie file in Netscape format (curl's `-b FILE`, wget's and aria2c's
        /// `--load-cookies`), read when the transport starts: its cookies go with every request
        /// they match. Nil for none.
        public var cookieFile: String?
        /// Where the transport writes its cookies, in Netscape format and readable by its owner
        /// only, when it shuts down (curl's `-c`, wget's and aria2c's `--save-cookies`). Nil for
        /// nowhere.
        ///
        /// With either this or ``cookieFile``, cookies are on: those a server sets are sent back
        /// on later requests that match them, across redirects and transfers of this transport.
        public var cookieJar: String?

        /// Creates a configuration with the defaults: 64 connections, 16 per host, a 512 KiB
        /// buffer, HTTP/2 over TLS, progress at most every 100 ms.
        public init(
            maxConnections: Int = 64,
            maxConnectionsPerHost: Int = 16,
            receiveBufferSize: Int = 512 * 1024,
            prefersHTTP2: Bool = true,
            progressInterval: Duration = .milliseconds(100),
            userAgent: String = "Peregrine/0.1",
            logger: Logger = Logger(label: "peregrine.curl")
        ) {
            self.maxConnections = maxConnections
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.receiveBufferSize = receiveBufferSize
            self.prefersHTTP2 = prefersHTTP2
            self.progressInterval = progressInterval
            self.userAgent = userAgent
            self.logger = logger
        }
    }

    private let driver: CurlDriver
    private let nextID = Atomic<UInt64>(1)

    /// Creates a transport and starts its thread.
    public init(configuration: Configuration = Configuration()) {
        driver = CurlDriver(configuration: configuration)
    }

    deinit { driver.shutdown() }

    public func start(
        _ request: TransferRequest,
        sink: any TransferSink,
        events: @escaping @Sendable (TransferEvent) -> Void
    ) -> TransferID {
        let id = TransferID(rawValue: nextID.add(1, ordering: .relaxed).oldValue)
        driver.submit(.start(CurlTransfer(id: id, request: request, sink: sink, events: events)))
        return id
    }

    public func pause(_ id: TransferID) { driver.submit(.pause(id)) }

    public func resume(_ id: TransferID) { driver.submit(.resume(id)) }

    public func cancel(_ id: TransferID) { driver.submit(.cancel(id)) }

    /// Cancels every transfer, waits for their completion events and stops the thread.
    /// Transfers started afterwards complete at once with `TransportError.Code.cancelled`.
    public func shutdown() { driver.shutdown() }

    /// The libcurl version this transport runs on, e.g. "7.88.1".
    public static var libcurlVersion: String { String(cString: curl_version_info(CURLVERSION_TENTH).pointee.version) }
}
