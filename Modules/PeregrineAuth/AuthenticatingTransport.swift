import PeregrineCore
import PeregrineTransport
import Synchronization

/// A `Transport` decorator that answers `401` (and a proxy's `407`) with
/// Basic or Digest credentials: the adapter and the retrier of Alamofire in one layer.
///
/// For each transfer it
/// - adds credentials preemptively where an earlier challenge taught it the space (Basic at and
///   below the challenged directory, Digest with the known nonce and the next `nc`);
/// - when the wrapped transport reports a challenge, hides that `401` head and completion from
///   the caller, picks the strongest allowed challenge, gets a credential (transfer handler →
///   session handler → ``CredentialStore``), and restarts the transfer with the header;
/// - answers `stale=true` with the new nonce without asking again, answers each new challenge
///   once, and fails with `FailureReason.Code.authentication` (the message names
///   the realm) when credentials are missing or rejected — never an endless loop;
/// - forwards ``pause(_:)``, ``resume(_:)`` and ``cancel(_:)`` to the transfer running at the
///   moment, also while a handler is deciding.
///
/// Credentials never leave the request's origin: a challenge from another origin after a
/// redirect is not answered, and the wrapped transport drops `Authorization` on cross-origin
/// hops. Over plain http, credentials are sent only to hosts in
/// ``Configuration/plainHTTPHosts``.
///
/// Every implementation requirement of `Transport` holds for the caller:
/// one head per transfer (the final one), serial events, exactly one completion, nothing written
/// for a non-2xx answer (the wrapped transport writes nothing for the `401`).
///
/// ```swift
/// let store = CredentialStore()
/// store.set(Credential(user: "alice", password: "s3cret"),
///           for: ProtectionSpace(scheme: "https", host: "files.example", port: 443))
/// let transport = AuthenticatingTransport(wrapping: CurlTransport(), credentials: store)
/// let summary = try await transport.download(request, to: sink)
/// ```
public final class AuthenticatingTransport: Transport {
    /// How the retrier behaves.
    public struct Configuration: Sendable {
        /// The schemes answered (the CLI's `--auth basic|digest|any`); all by default.
        public var allowedSchemes: Set<AuthenticationScheme>
        /// Hosts to which credentials may travel over plain http. Empty by default: a challenge
        /// over http fails instead of exposing a password (Basic) or its hash (Digest).
        public var plainHTTPHosts: Set<String>
        /// Asked for every transfer's challenges (SDEDownloadManager's
        /// `sessionDidReceiveChallengeHandler`), after the transfer's own handler.
        public var challengeHandler: (any ChallengeHandler)?
        /// The proxy the wrapped transport goes through, whose `407` challenges are answered
        /// with `Proxy-Authorization`; nil when there is none (a `407` then fails).
        public var proxy: Origin?
        /// The most challenge answers per transfer, stale nonces included; at least 1.
        public var maximumAttempts: Int
        /// Whether requests carry credentials before being challenged, where a space is known.
        public var sendsPreemptively: Bool
        /// The trust map that sets each request's `TrustPolicy`; nil to
        /// leave the request's own policy.
        public var serverTrust: ServerTrustMap?
        /// Where Digest client nonces come from.
        public var clientNonces: ClientNonceGenerator
        /// The challenge parser's limits.
        public var parserLimits: AuthenticationChallengeParser.Limits

        /// Creates a configuration.
        public init(
            allowedSchemes: Set<AuthenticationScheme> = Set(AuthenticationScheme.allCases),
            plainHTTPHosts: Set<String> = [],
            challengeHandler: (any ChallengeHandler)? = nil,
            proxy: Origin? = nil,
            maximumAttempts: Int = 3,
            sendsPreemptively: Bool = true,
            serverTrust: ServerTrustMap? = nil,
            clientNonces: ClientNonceGenerator = .random,
            parserLimits: AuthenticationChallengeParser.Limits = AuthenticationChallengeParser.Limits()
        ) {
            self.allowedSchemes = allowedSchemes
            self.plainHTTPHosts = Set(plainHTTPHosts.map { $0.lowercased() })
            self.challengeHandler = challengeHandler
            self.proxy = proxy
            self.maximumAttempts = max(1, maximumAttempts)
            self.sendsPreemptively = sendsPreemptively
            self.serverTrust = serverTrust
            self.clientNonces = clientNonces
            self.parserLimits = parserLimits
        }

        /// Whether credentials may be sent to `host` over `scheme`.
        func allowsCredentials(scheme: String, host: String) -> Bool {
            scheme == "https" || plainHTTPHosts.contains(host.lowercased())
        }
    }

    /// The transport that moves the bytes.
    public let wrapped: any Transport

    /// The wrapped transport's answer: events are passed on from its thread.
    public var eventsShareOneThread: Bool { wrapped.eventsShareOneThread }
    /// Where the default handling finds credentials.
    public let credentials: CredentialStore
    /// What was learned from challenges, for preemptive credentials; may be shared.
    public let cache: AuthenticationCache
    /// The behaviour.
    public let configuration: Configuration

    private let transfers = Locked<[UInt64: AuthenticatedTransfer]>([:])
    private let nextID = Atomic<UInt64>(1)

    /// Creates a decorator.
    ///
    /// - Parameters:
    ///   - wrapped: the transport that runs the transfers.
    ///   - credentials: the store the default handling answers from.
    ///   - cache: the spaces learned; pass one cache to several decorators to share nonces.
    ///   - configuration: schemes, plain-http hosts, handlers, proxy, trust map.
    public init(
        wrapping wrapped: any Transport,
        credentials: CredentialStore = CredentialStore(),
        cache: AuthenticationCache = AuthenticationCache(),
        configuration: Configuration = Configuration()
    ) {
        self.wrapped = wrapped
        self.credentials = credentials
        self.cache = cache
        self.configuration = configuration
    }

    public func start(
        _ request: TransferRequest,
        sink: any TransferSink,
        events: @escaping @Sendable (TransferEvent) -> Void
    ) -> TransferID {
        start(request, sink: sink, challengeHandler: nil, events: events)
    }

    /// Starts a transfer with its own challenge handler (SDEDownloadManager's
    /// `taskDidReceiveChallengeHandler`), asked before the session's.
    public func start(
        _ request: TransferRequest,
        sink: any TransferSink,
        challengeHandler: (any ChallengeHandler)?,
        events: @escaping @Sendable (TransferEvent) -> Void
    ) -> TransferID {
        let id = TransferID(rawValue: nextID.add(1, ordering: .relaxed).oldValue)
        let transfer = AuthenticatedTransfer(
            id: id, request: request, sink: sink, events: events, taskHandler: challengeHandler, owner: self)
        transfers.withLock { $0[id.rawValue] = transfer }
        transfer.begin()
        return id
    }

    public func pause(_ id: TransferID) { transfer(id)?.pause() }

    public func resume(_ id: TransferID) { transfer(id)?.resume() }

    public func cancel(_ id: TransferID) { transfer(id)?.cancel() }

    /// The transfers that have not completed.
    public var activeTransfers: [TransferID] {
        transfers.withLock { $0.keys.sorted().map(TransferID.init(rawValue:)) }
    }

    private func transfer(_ id: TransferID) -> AuthenticatedTransfer? {
        transfers.withLock { $0[id.rawValue] }
    }

    func transferFinished(_ id: TransferID) {
        _ = transfers.withLock { $0.removeValue(forKey: id.rawValue) }
    }
}
