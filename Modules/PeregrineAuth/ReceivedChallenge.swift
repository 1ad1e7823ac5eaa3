import PeregrineCore
import PeregrineTransport

/// A server's (or proxy's) demand for credentials, as handed to a ``ChallengeHandler``: the
/// counterpart of URLSession's `URLAuthenticationChallenge`.
public struct ReceivedChallenge: Sendable {
    /// The transfer of the ``AuthenticatingTransport`` that was challenged.
    public var transferID: TransferID
    /// The URL that answered with the challenge (after redirects on the same origin).
    public var url: DownloadURL
    /// Where the credential applies: origin (or proxy) and realm.
    public var protectionSpace: ProtectionSpace
    /// The scheme of the challenge considered.
    public var scheme: AuthenticationScheme
    /// The challenge considered: the strongest allowed one not yet rejected.
    public var challenge: AuthenticationChallenge
    /// The checked Digest challenge, for ``AuthenticationScheme/digest``.
    public var digest: DigestChallenge?
    /// Every challenge of the response, in order.
    public var allChallenges: [AuthenticationChallenge]
    /// How many credentials this transfer already sent for the space and had rejected.
    public var previousFailureCount: Int
    /// The credential the store holds for the space (nil when none, or when it was rejected).
    public var proposedCredential: Credential?
    /// The `401` or `407` response.
    public var failureResponse: ResponseHead

    /// Whether a proxy asks (`407`).
    public var isProxy: Bool { protectionSpace.isProxy }
}
