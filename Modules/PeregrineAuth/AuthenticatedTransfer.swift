import PeregrineCore
import PeregrineTransport
import Synchronization

/// One transfer of an ``AuthenticatingTransport``: a chain of attempts on the wrapped
/// transport, of which the caller sees one.
///
/// Phases: `running` (an attempt runs on the wrapped transport; its events are forwarded, a
/// challenge's head is held back), `resolving` (the attempt ended with a challenge; a handler
/// may be deciding), `finished` (the completion was delivered). Every phase change happens
/// under the lock, and whoever moves the transfer to `finished` is the only one to deliver
/// the completion, so cancelling while a handler decides cannot produce two.
final class AuthenticatedTransfer: Sendable {
    /// What an attempt sent to one kind of server.
    struct Sent: Sendable {
        var space: ProtectionSpace
        var scheme: AuthenticationScheme
        var credential: Credential
        var isPreemptive: Bool
        /// The Digest nonce answered, so a `stale=true` that repeats it is not answered again.
        var nonce: String?
    }

    private enum Phase {
        case running
        case resolving
        case finished
    }

    private struct State {
        var phase = Phase.running
        var generation = 0
        var inner: TransferID?
        var request: TransferRequest
        var isPaused = false
        var isCancelled = false
        var heldHead: ResponseHead?
        var redirectsBefore = 0
        var redirectsThisAttempt = 0
        var sentToOrigin: Sent?
        var sentToProxy: Sent?
        var attempts = 0
        var failures: [ProtectionSpace: Int] = [:]
        var rejected: [ProtectionSpace: [Credential]] = [:]
    }

    /// The outcome of answering one challenge response.
    private enum Resolution {
        case answer(ChallengeSelection.Candidate, Credential, ProtectionSpace)
        case fail(String)
    }

    let id: TransferID
    private let original: TransferRequest
    private let sink: any TransferSink
    private let events: @Sendable (TransferEvent) -> Void
    private let taskHandler: (any ChallengeHandler)?
    private let owner: AuthenticatingTransport
    private let state: Locked<State>

    private var configuration: AuthenticatingTransport.Configuration { owner.configuration }
    private var wrapped: any Transport { owner.wrapped }

    init(
        id: TransferID, request: TransferRequest, sink: any TransferSink,
        events: @escaping @Sendable (TransferEvent) -> Void, taskHandler: (any ChallengeHandler)?,
        owner: AuthenticatingTransport
    ) {
        self.id = id
        self.original = request
        self.sink = sink
        self.events = events
        self.taskHandler = taskHandler
        self.owner = owner
        state = Locked(State(request: request))
    }

    // MARK: Control

    /// Applies the trust map, adds preemptive credentials and starts the first attempt.
    func begin() {
        var request = original
        if let trust = configuration.serverTrust { request = trust.applying(to: request) }
        var toOrigin: Sent?
        var toProxy: Sent?
        if configuration.sendsPreemptively {
            let url = request.url
            if request.credentials == nil, configuration.allowsCredentials(scheme: url.scheme, host: url.host),
                let prepared = owner.cache.authorization(
                    for: url, method: request.method, nonces: configuration.clientNonces)
            {
                request.credentials = RequestCredentials(
                    authorization: prepared.header, allowPlainHTTP: url.scheme == "http")
                toOrigin = Sent(
                    space: prepared.space, scheme: prepared.scheme, credential: prepared.credential,
                    isPreemptive: true, nonce: prepared.nonce)
            }
            if let proxy = configuration.proxy, !request.headers.contains(name: "Proxy-Authorization"),
                configuration.allowsCredentials(scheme: proxy.scheme, host: proxy.host),
                let prepared = owner.cache.proxyAuthorization(
                    for: url, proxy: proxy, method: request.method, nonces: configuration.clientNonces)
            {
                request.headers.replaceOrAdd(name: "Proxy-Authorization", value: prepared.header)
                toProxy = Sent(
                    space: prepared.space, scheme: prepared.scheme, credential: prepared.credential,
                    isPreemptive: true, nonce: prepared.nonce)
            }
        }
        state.withLock { state in
            state.sentToOrigin = toOrigin
            state.sentToProxy = toProxy
        }
        launch(request, from: .running)
    }

    func pause() {
        let inner = state.withLock { state -> TransferID? in
            guard state.phase != .finished else { return nil }
            state.isPaused = true
            return state.phase == .running ? state.inner : nil
        }
        if let inner { wrapped.pause(inner) }
    }

    func resume() {
        let inner = state.withLock { state -> TransferID? in
            guard state.phase != .finished else { return nil }
            state.isPaused = false
            return state.phase == .running ? state.inner : nil
        }
        if let inner { wrapped.resume(inner) }
    }

    func cancel() {
        enum Action {
            case none
            case forward(TransferID)
            case complete
        }
        let action = state.withLock { state -> Action in
            guard state.phase != .finished, !state.isCancelled else { return .none }
            state.isCancelled = true
            switch state.phase {
            case .running:
                // Without an identifier yet, `launch` cancels the attempt as soon as it has one.
                return state.inner.map(Action.forward) ?? .none
            case .resolving:
                state.phase = .finished
                return .complete
            case .finished:
                return .none
            }
        }
        switch action {
        case .none:
            break
        case .forward(let inner):
            wrapped.cancel(inner)
        case .complete:
            deliverCompletion(.failure(cancelledError()))
        }
    }

    // MARK: Attempts

    /// Starts an attempt, if the transfer is still in `expected` phase and not cancelled.
    private func launch(_ request: TransferRequest, from expected: Phase) {
        let generation = state.withLock { state -> Int? in
            guard state.phase == expected, !state.isCancelled || expected == .running else { return nil }
            state.phase = .running
            state.generation += 1
            state.inner = nil
            state.request = request
            state.heldHead = nil
            state.redirectsThisAttempt = 0
            return state.generation
        }
        guard let generation else { return }
        let inner = wrapped.start(request, sink: sink) { [self] event in
            receive(event, generation: generation)
        }
        let (cancelNow, pauseNow) = state.withLock { state -> (Bool, Bool) in
            guard state.generation == generation else { return (false, false) }
            state.inner = inner
            return (state.isCancelled, state.isPaused)
        }
        if cancelNow {
            wrapped.cancel(inner)
        } else if pauseNow {
            wrapped.pause(inner)
        }
    }

    /// An event of the attempt `generation`.
    private func receive(_ event: TransferEvent, generation: Int) {
        let current = state.withLock { $0.generation == generation && $0.phase == .running }
        guard current else { return }
        switch event {
        case .redirected:
            state.withLock { $0.redirectsThisAttempt += 1 }
            events(event)
        case .head(let head):
            if head.status == 401 || head.status == 407 {
                state.withLock { $0.heldHead = head }
                return
            }
            noteAnswered(head)
            events(event)
        case .progress:
            events(event)
        case .completed(let result):
            let (held, redirectsBefore) = state.withLock { ($0.heldHead, $0.redirectsBefore) }
            if let held, case .failure(let error) = result, error.code == .httpStatus, error.httpStatus == held.status {
                challenged(by: held)
                return
            }
            if let held { events(.head(held)) }
            var result = result
            if case .success(var summary) = result {
                summary.redirectCount += redirectsBefore
                result = .success(summary)
            }
            finish(result)
        }
    }

    /// A response that is not a challenge: the credentials sent (if any) were accepted. Takes
    /// a Digest `nextnonce` from `Authentication-Info` for the next request.
    private func noteAnswered(_ head: ResponseHead) {
        let (toOrigin, toProxy) = state.withLock { ($0.sentToOrigin, $0.sentToProxy) }
        let parser = AuthenticationChallengeParser(limits: configuration.parserLimits)
        for (sent, field) in [(toOrigin, "Authentication-Info"), (toProxy, "Proxy-Authentication-Info")] {
            guard let sent, sent.scheme == .digest, let value = head.headers[field],
                let parameters = try? parser.parseParameters(value),
                let next = parameters.first(where: { $0.name.caseInsensitiveEquals("nextnonce") })?.value,
                !next.isEmpty
            else { continue }
            owner.cache.updateNonce(next, for: sent.space)
        }
    }

    // MARK: Challenges

    /// The attempt ended with `head`, a `401` or `407`: answer it or fail.
    private func challenged(by head: ResponseHead) {
        enum Next {
            case resolve
            case completeCancelled
            case nothing
        }
        let next = state.withLock { state -> Next in
            guard state.phase == .running else { return .nothing }
            if state.isCancelled {
                state.phase = .finished
                return .completeCancelled
            }
            state.phase = .resolving
            return .resolve
        }
        switch next {
        case .resolve: break
        case .completeCancelled: return deliverCompletion(.failure(cancelledError()))
        case .nothing: return
        }

        let isProxy = head.status == 407
        let snapshot = state.withLock { $0 }
        let hop = (try? DownloadURL(head.effectiveURL)) ?? snapshot.request.url
        let selection = ChallengeSelection(
            fields: head.headers.values(for: isProxy ? "Proxy-Authenticate" : "WWW-Authenticate"),
            allowed: configuration.allowedSchemes,
            parser: AuthenticationChallengeParser(limits: configuration.parserLimits))

        let origin: Origin
        if isProxy {
            guard let proxy = configuration.proxy else {
                let realms = selection.candidates.map(\.realm)
                return fail(
                    head,
                    "a proxy asked for credentials (407"
                        + (realms.first.map { ", realm \"\(AuthenticationText.excerpt($0))\"" } ?? "")
                        + ") but no proxy is configured for this transport")
            }
            origin = proxy
        } else {
            guard hop.origin == original.url.origin else {
                return fail(
                    head,
                    "\(hop.origin) asks for credentials after a redirect from \(original.url.origin); "
                        + "credentials are never sent to another origin")
            }
            origin = hop.origin
        }

        guard !selection.candidates.isEmpty else {
            return fail(head, "\(origin) asks for credentials (\(head.status)) and \(selection.explanation)")
        }

        let strongest = selection.candidates[0]
        guard configuration.allowsCredentials(scheme: origin.scheme, host: origin.host) else {
            return fail(
                head,
                "refused to send credentials for realm \"\(AuthenticationText.excerpt(strongest.realm))\" over plain "
                    + "http to \(origin.host); add the host to plainHTTPHosts if that is intended")
        }
        guard snapshot.attempts < configuration.maximumAttempts else {
            return fail(
                head,
                "gave up on realm \"\(AuthenticationText.excerpt(strongest.realm))\" at \(origin) after "
                    + "\(snapshot.attempts) answered challenges")
        }

        // A stale nonce with the credential just sent: answer the new nonce, ask no one. A
        // "stale" challenge that repeats the nonce just answered is no new challenge: it is
        // treated as a rejection, so a confused server cannot keep the client answering.
        let previous = isProxy ? snapshot.sentToProxy : snapshot.sentToOrigin
        if let previous, previous.scheme == .digest,
            let stale = selection.candidates.first(where: {
                guard let digest = $0.digest, digest.isStale, $0.realm == previous.space.realm else { return false }
                return previous.nonce == nil || digest.nonce != previous.nonce
            })
        {
            return answer(
                head, hop: hop, isProxy: isProxy, candidate: stale, credential: previous.credential,
                space: ProtectionSpace(origin: origin, realm: stale.realm, isProxy: isProxy))
        }
        if let previous {
            owner.cache.forget(previous.space)
            if !previous.isPreemptive {
                state.withLock { state in
                    state.failures[previous.space, default: 0] += 1
                    state.rejected[previous.space, default: []].append(previous.credential)
                }
            }
        }

        let contexts = selection.candidates.map { candidate in
            makeContext(candidate, selection: selection, origin: origin, isProxy: isProxy, hop: hop, head: head)
        }
        let sessionHandler = configuration.challengeHandler
        if taskHandler == nil, sessionHandler == nil {
            var resolution: Resolution?
            for context in contexts {
                if let decided = decide(context, .performDefaultHandling) {
                    resolution = decided
                    break
                }
            }
            conclude(resolution, head: head, hop: hop, isProxy: isProxy, contexts: contexts)
        } else {
            let taskHandler = taskHandler
            Task { [self] in
                var resolution: Resolution?
                for context in contexts {
                    // A transfer cancelled while a handler decided is over; ask no one else.
                    guard !isFinished else { return }
                    var disposition = await taskHandler?.handle(context.0) ?? .performDefaultHandling
                    if disposition == .performDefaultHandling, let sessionHandler, !isFinished {
                        disposition = await sessionHandler.handle(context.0)
                    }
                    if let decided = decide(context, disposition) {
                        resolution = decided
                        break
                    }
                }
                conclude(resolution, head: head, hop: hop, isProxy: isProxy, contexts: contexts)
            }
        }
    }

    private func makeContext(
        _ candidate: ChallengeSelection.Candidate, selection: ChallengeSelection, origin: Origin, isProxy: Bool,
        hop: DownloadURL, head: ResponseHead
    ) -> (ReceivedChallenge, ChallengeSelection.Candidate) {
        let space = ProtectionSpace(origin: origin, realm: candidate.realm, isProxy: isProxy)
        let (failures, rejected) = state.withLock { ($0.failures[space] ?? 0, $0.rejected[space] ?? []) }
        let stored = owner.credentials.credential(for: space)
        let challenge = ReceivedChallenge(
            transferID: id, url: hop, protectionSpace: space, scheme: candidate.scheme,
            challenge: candidate.challenge, digest: candidate.digest, allChallenges: selection.challenges,
            previousFailureCount: failures,
            proposedCredential: stored.flatMap { rejected.contains($0) ? nil : $0 }, failureResponse: head)
        return (challenge, candidate)
    }

    /// What a disposition means for one candidate: an answer, a failure, or nil to consider
    /// the next candidate.
    private func decide(
        _ context: (ReceivedChallenge, ChallengeSelection.Candidate), _ disposition: ChallengeDisposition
    ) -> Resolution? {
        let (challenge, candidate) = context
        let space = challenge.protectionSpace
        let realm = AuthenticationText.excerpt(candidate.realm)
        let rejected = state.withLock { $0.rejected[space] ?? [] }
        switch disposition {
        case .useCredential(let credential):
            guard !rejected.contains(credential) else { return .fail(rejectionMessage(challenge, candidate)) }
            return .answer(candidate, credential, space)
        case .performDefaultHandling:
            if let credential = challenge.proposedCredential { return .answer(candidate, credential, space) }
            if challenge.previousFailureCount > 0 { return .fail(rejectionMessage(challenge, candidate)) }
            return nil
        case .cancelAuthenticationChallenge:
            return .fail(
                "the challenge handler cancelled the challenge for realm \"\(realm)\" at \(space.origin)")
        case .rejectProtectionSpace:
            return nil
        }
    }

    private func rejectionMessage(_ challenge: ReceivedChallenge, _ candidate: ChallengeSelection.Candidate) -> String {
        let kind = candidate.digest.map { "Digest \($0.algorithm)" } ?? "Basic"
        let count = challenge.previousFailureCount
        return "\(challenge.isProxy ? "the proxy" : "the server") rejected the credentials for realm "
            + "\"\(AuthenticationText.excerpt(candidate.realm))\" at \(challenge.protectionSpace.origin) (\(kind))"
            + (count > 1 ? " \(count) times" : "") + "; check the user name and password"
    }

    private func conclude(
        _ resolution: Resolution?, head: ResponseHead, hop: DownloadURL, isProxy: Bool,
        contexts: [(ReceivedChallenge, ChallengeSelection.Candidate)]
    ) {
        switch resolution {
        case .answer(let candidate, let credential, let space):
            answer(head, hop: hop, isProxy: isProxy, candidate: candidate, credential: credential, space: space)
        case .fail(let message):
            fail(head, message)
        case nil:
            let realms = contexts.map { "\"\(AuthenticationText.excerpt($0.1.realm))\" (\($0.1.scheme))" }
            let location = contexts.first.map { "\($0.0.protectionSpace.origin)" } ?? "the server"
            fail(
                head,
                "\(location) asks for credentials for realm " + realms.joined(separator: " or ")
                    + " and none are stored or given for it")
        }
    }

    /// Computes the header for `candidate` and starts the next attempt.
    private func answer(
        _ head: ResponseHead, hop: DownloadURL, isProxy: Bool, candidate: ChallengeSelection.Candidate,
        credential: Credential, space: ProtectionSpace
    ) {
        let cache = owner.cache
        var request = state.withLock { $0.request }
        let header: String
        var nonce: String?
        switch candidate.scheme {
        case .basic:
            do {
                header = try BasicAuthorization(credential).headerValue
            } catch {
                return fail(head, "cannot answer realm \"\(AuthenticationText.excerpt(candidate.realm))\": \(error)")
            }
            cache.insert(
                space: space,
                pathPrefixes: isProxy ? [] : [RequestTarget.directory(of: RequestTarget.path(of: hop))],
                credential: credential, method: .basic(header))
        case .digest:
            guard let digest = candidate.digest else { return fail(head, "a Digest challenge without its parameters") }
            if isProxy, let proxy = configuration.proxy {
                cache.rememberDigest(digest, credential: credential, for: hop, proxy: proxy)
            } else {
                cache.rememberDigest(digest, credential: credential, for: hop)
            }
            let uri = isProxy ? RequestTarget.absoluteForm(of: request.url) : RequestTarget.originForm(of: hop)
            guard
                let prepared = cache.authorization(
                    for: space, uri: uri, method: request.method, nonces: configuration.clientNonces)
            else {
                return fail(
                    head,
                    "cannot compute the Digest answer for realm \"\(AuthenticationText.excerpt(candidate.realm))\" "
                        + "(\(digest.algorithm) is not available)")
            }
            header = prepared.header
            nonce = prepared.nonce
        }

        let sent = Sent(
            space: space, scheme: candidate.scheme, credential: credential, isPreemptive: false, nonce: nonce)
        if isProxy {
            request.headers.replaceOrAdd(name: "Proxy-Authorization", value: header)
        } else {
            // Same origin as the request (checked before): ask the URL that challenged directly.
            let hops = state.withLock { $0.redirectsThisAttempt }
            if hop != request.url {
                request.url = hop
                request.redirects.maxHops = max(0, request.redirects.maxHops - hops)
            }
            request.credentials = RequestCredentials(authorization: header, allowPlainHTTP: hop.scheme == "http")
        }
        state.withLock { state in
            state.attempts += 1
            if isProxy {
                state.sentToProxy = sent
            } else {
                if hop != state.request.url { state.redirectsBefore += state.redirectsThisAttempt }
                state.sentToOrigin = sent
            }
        }
        launch(request, from: .resolving)
    }

    // MARK: Completion

    private var isFinished: Bool { state.withLock { $0.phase == .finished } }

    /// Ends the transfer with the challenge's head and an authentication failure.
    private func fail(_ head: ResponseHead, _ message: String) {
        let claimed = state.withLock { state -> Bool in
            guard state.phase != .finished else { return false }
            state.phase = .finished
            return true
        }
        guard claimed else { return }
        let error = TransportError(.httpStatus, message, httpStatus: head.status, url: head.effectiveURL)
        deliverHeadAndCompletion(head, .failure(error))
    }

    /// Ends the transfer with `result`, unless it already ended.
    private func finish(_ result: Result<TransferSummary, TransportError>) {
        let claimed = state.withLock { state -> Bool in
            guard state.phase != .finished else { return false }
            state.phase = .finished
            return true
        }
        if claimed { deliverCompletion(result) }
    }

    private func deliverHeadAndCompletion(_ head: ResponseHead, _ result: Result<TransferSummary, TransportError>) {
        events(.head(head))
        deliverCompletion(result)
    }

    private func deliverCompletion(_ result: Result<TransferSummary, TransportError>) {
        owner.transferFinished(id)
        events(.completed(result))
    }

    private func cancelledError() -> TransportError {
        TransportError(.cancelled, "the transfer was cancelled", url: original.url.string)
    }
}
