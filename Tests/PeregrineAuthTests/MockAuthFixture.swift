import PeregrineAuth
import PeregrineCore
import PeregrineMockTransport
import PeregrineTransport

/// An ``AuthenticatingTransport`` over the in-memory transport, with its server, store and cache.
struct MockAuthFixture {
    let server = MockServer()
    let mock: MockTransport
    let store = CredentialStore()
    let cache = AuthenticationCache()
    let transport: AuthenticatingTransport

    init(configuration: AuthenticatingTransport.Configuration = .init()) {
        mock = MockTransport(server: server)
        transport = AuthenticatingTransport(
            wrapping: mock, credentials: store, cache: cache, configuration: configuration)
    }

    /// A 1 KiB file served at `path`.
    static let body = MockBody.generated(seed: 7, count: 1024)

    func request(_ url: String) throws -> TransferRequest { try TransferRequest(url: url) }

    /// The Authorization values the server received for `path`, nil where none was sent.
    func authorizations(for path: String) -> [String?] {
        server.requests(for: path).map { $0.headers["Authorization"] }
    }

    /// The header a Digest answer with these inputs has; the RFC tests pin how it is computed.
    static func digestHeader(
        _ challenge: String, credential: Credential, uri: String, nonceCount: UInt32, clientNonce: String,
        method: String = "GET"
    ) throws -> String {
        let parsed = try DigestChallenge(AuthenticationChallengeParser().parse(challenge)[0])
        return try DigestAuthorization(
            challenge: parsed, credential: credential, method: method, uri: uri, nonceCount: nonceCount,
            clientNonce: clientNonce
        ).headerValue()
    }
}
