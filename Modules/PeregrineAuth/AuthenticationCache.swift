import PeregrineCore
import PeregrineTransport
import Synchronization

/// What the retrier learned from answered challenges: for each protection space, the scheme,
/// the credential and, for Digest, the current nonce and how many requests used it.
///
/// It lets later requests to the same space carry credentials preemptively: Basic for every
/// path at or below the directory of the challenged URL (RFC 7617 §2.2), Digest for the URIs
/// of the challenge's `domain`, or the whole origin when it has none (RFC 7616 §3.3), with
/// `nc` counted up per nonce across requests. A space whose credentials are rejected is
/// forgotten; a new nonce (`stale=true`, `nextnonce`) restarts the count at 1.
///
/// Thread safety: every method may be called from any thread; each Digest request gets its own
/// `nc`, also when many transfers to the same space run at once.
public final class AuthenticationCache: Sendable {
    struct DigestSession: Sendable {
        var challenge: DigestChallenge
        var nonceCount: UInt32 = 0
        var sessionClientNonce: String?
    }

    enum Method: Sendable {
        case basic(String)
        case digest(DigestSession)
    }

    struct Entry: Sendable {
        var space: ProtectionSpace
        /// Path prefixes the entry covers; empty for the whole origin.
        var pathPrefixes: [String]
        var credential: Credential
        var method: Method
        var serial: UInt64
    }

    /// A header computed from the cache for one request.
    struct Prepared: Sendable {
        var header: String
        var space: ProtectionSpace
        var scheme: AuthenticationScheme
        var credential: Credential
        /// The Digest nonce the header answers.
        var nonce: String?
    }

    private struct State {
        var entries: [Entry] = []
        var serial: UInt64 = 0
    }

    private let state = Locked(State())

    /// Creates an empty cache.
    public init() {}

    /// Remembers Basic credentials for `realm` at the directory of `url` and below.
    ///
    /// - Throws: ``CredentialError`` when Basic cannot carry the credential.
    public func rememberBasic(_ credential: Credential, realm: String?, for url: DownloadURL) throws(CredentialError) {
        let header = try BasicAuthorization(credential).headerValue
        insert(
            space: ProtectionSpace(url: url, realm: realm),
            pathPrefixes: [RequestTarget.directory(of: RequestTarget.path(of: url))],
            credential: credential, method: .basic(header))
    }

    /// Remembers a Digest challenge and the credential that answers it, so that the next
    /// request to the space (the challenge's `domain`, or the whole origin of `url`) carries
    /// a header at once, with `nc=00000001`.
    ///
    /// For a proxy's challenge pass its `proxy` origin: the space then covers every request
    /// through that proxy.
    public func rememberDigest(
        _ challenge: DigestChallenge, credential: Credential, for url: DownloadURL, proxy: Origin? = nil
    ) {
        if let proxy {
            insert(
                space: ProtectionSpace(origin: proxy, realm: challenge.realm, isProxy: true), pathPrefixes: [],
                credential: credential, method: .digest(DigestSession(challenge: challenge)))
        } else {
            insert(
                space: ProtectionSpace(url: url, realm: challenge.realm),
                pathPrefixes: Self.domainPrefixes(challenge.domain, of: url),
                credential: credential, method: .digest(DigestSession(challenge: challenge)))
        }
    }

    /// Forgets what was learned for `space` (all realms when its realm is nil).
    public func forget(_ space: ProtectionSpace) {
        state.withLock { state in
            state.entries.removeAll { entry in
                entry.space.origin == space.origin && entry.space.isProxy == space.isProxy
                    && (space.realm == nil || entry.space.realm == space.realm)
            }
        }
    }

    /// Forgets everything.
    public func removeAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// The spaces remembered, oldest first.
    public var spaces: [ProtectionSpace] {
        state.withLock { $0.entries.map(\.space) }
    }

    /// The scheme remembered for `space`.
    public func scheme(for space: ProtectionSpace) -> AuthenticationScheme? {
        state.withLock { state in
            state.entries.last { $0.space == space }.map { entry in
                switch entry.method {
                case .basic: .basic
                case .digest: .digest
                }
            }
        }
    }

    /// The current Digest nonce of `space` and how many requests have used it.
    public func digestNonce(for space: ProtectionSpace) -> (nonce: String, count: UInt32)? {
        state.withLock { state in
            guard let entry = state.entries.last(where: { $0.space == space }),
                case .digest(let session) = entry.method
            else { return nil }
            return (session.challenge.nonce, session.nonceCount)
        }
    }

    // MARK: Used by the retrier

    /// Stores an entry, replacing any for the same space.
    func insert(space: ProtectionSpace, pathPrefixes: [String], credential: Credential, method: Method) {
        state.withLock { state in
            state.entries.removeAll { $0.space == space }
            state.serial += 1
            state.entries.append(
                Entry(
                    space: space, pathPrefixes: pathPrefixes, credential: credential, method: method,
                    serial: state.serial))
        }
    }

    /// The header for the origin server of `url`, from the most specific entry covering it.
    func authorization(
        for url: DownloadURL, method: HTTPMethod, nonces: ClientNonceGenerator
    ) -> Prepared? {
        let path = RequestTarget.path(of: url)
        return prepare(uri: RequestTarget.originForm(of: url), method: method, nonces: nonces) { entry in
            guard !entry.space.isProxy, entry.space.origin == url.origin else { return nil }
            if entry.pathPrefixes.isEmpty { return 0 }
            let matches = entry.pathPrefixes.filter { path.hasPrefix($0) }.map(\.count)
            return matches.max().map { $0 + 1 }
        }
    }

    /// The header for `proxy`, for a request to `url` through it.
    func proxyAuthorization(
        for url: DownloadURL, proxy: Origin, method: HTTPMethod, nonces: ClientNonceGenerator
    ) -> Prepared? {
        prepare(uri: RequestTarget.absoluteForm(of: url), method: method, nonces: nonces) { entry in
            entry.space.isProxy && entry.space.origin == proxy ? 0 : nil
        }
    }

    /// The header for exactly `space`, e.g. right after a challenge was stored.
    func authorization(
        for space: ProtectionSpace, uri: String, method: HTTPMethod, nonces: ClientNonceGenerator
    ) -> Prepared? {
        prepare(uri: uri, method: method, nonces: nonces) { $0.space == space ? 0 : nil }
    }

    /// Takes a `nextnonce` (RFC 7616 §3.5): the next request answers it with `nc` 1.
    func updateNonce(_ nonce: String, for space: ProtectionSpace) {
        state.withLock { state in
            guard let index = state.entries.lastIndex(where: { $0.space == space }),
                case .digest(var session) = state.entries[index].method
            else { return }
            session.challenge.nonce = nonce
            session.challenge.isStale = false
            session.nonceCount = 0
            session.sessionClientNonce = nil
            state.entries[index].method = .digest(session)
        }
    }

    /// Picks the entry with the best score (the longest matching path prefix, then the most
    /// recent), takes the next `nc` under the lock, and computes the header outside it.
    private func prepare(
        uri: String, method: HTTPMethod, nonces: ClientNonceGenerator, score: (Entry) -> Int?
    ) -> Prepared? {
        let picked: Entry? = state.withLock { state in
            var best: (index: Int, score: Int, serial: UInt64)?
            for (index, entry) in state.entries.enumerated() {
                guard let value = score(entry) else { continue }
                if let current = best, (current.score, current.serial) > (value, entry.serial) { continue }
                best = (index, value, entry.serial)
            }
            guard let index = best?.index else { return nil }
            guard case .digest(var session) = state.entries[index].method else { return state.entries[index] }
            guard session.nonceCount < UInt32.max else {
                // The nonce is used up; the next challenge brings a new one.
                state.entries.remove(at: index)
                return nil
            }
            session.nonceCount += 1
            state.entries[index].method = .digest(session)
            return state.entries[index]
        }
        guard let entry = picked else { return nil }
        switch entry.method {
        case .basic(let header):
            return Prepared(header: header, space: entry.space, scheme: .basic, credential: entry.credential)
        case .digest(let session):
            // Only a Digest answer draws a client nonce, so an injected sequence stays in step.
            let clientNonce = nonces.next()
            var sessionClientNonce: String?
            if session.challenge.algorithm.isSession {
                sessionClientNonce = state.withLock { state in
                    guard let index = state.entries.lastIndex(where: { $0.serial == entry.serial }),
                        case .digest(var current) = state.entries[index].method,
                        current.challenge.nonce == session.challenge.nonce
                    else { return clientNonce }
                    if current.sessionClientNonce == nil {
                        current.sessionClientNonce = clientNonce
                        state.entries[index].method = .digest(current)
                    }
                    return current.sessionClientNonce
                }
            }
            let answer = DigestAuthorization(
                challenge: session.challenge, credential: entry.credential, method: method.rawValue, uri: uri,
                nonceCount: session.nonceCount, clientNonce: clientNonce, sessionClientNonce: sessionClientNonce)
            guard let header = try? answer.headerValue() else { return nil }
            return Prepared(
                header: header, space: entry.space, scheme: .digest, credential: entry.credential,
                nonce: session.challenge.nonce)
        }
    }

    /// The paths of a Digest `domain` that lie on `url`'s origin, relative ones resolved
    /// against it; empty (the whole origin) when none does.
    static func domainPrefixes(_ domain: [String], of url: DownloadURL) -> [String] {
        var prefixes: [String] = []
        for item in domain where !item.isEmpty {
            if item.hasPrefix("/") {
                prefixes.append(item)
            } else if let absolute = try? DownloadURL(item) {
                if absolute.origin == url.origin { prefixes.append(RequestTarget.path(of: absolute)) }
            } else {
                prefixes.append(RequestTarget.directory(of: RequestTarget.path(of: url)) + item)
            }
        }
        return prefixes
    }
}
