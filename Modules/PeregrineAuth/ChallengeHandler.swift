/// Decides how to answer a challenge: the equivalent of SDEDownloadManager's
/// `taskDidReceiveChallengeHandler` (given per transfer to
/// ``AuthenticatingTransport/start(_:sink:challengeHandler:events:)``) and
/// `sessionDidReceiveChallengeHandler` (``AuthenticatingTransport/Configuration/challengeHandler``,
/// for every transfer).
///
/// The transfer's handler is asked first; ``ChallengeDisposition/performDefaultHandling`` passes
/// the challenge on to the session's handler, and from there to the default handling, which
/// answers Basic and Digest from the ``CredentialStore``.
///
/// Handlers run in a task of their own, not on the transport's thread, so they may take their
/// time (ask a user, read a keychain); the transfer waits, and can still be cancelled.
public protocol ChallengeHandler: Sendable {
    /// Decides about one challenge.
    func handle(_ challenge: ReceivedChallenge) async -> ChallengeDisposition
}

/// A ``ChallengeHandler`` made from a closure.
public struct ClosureChallengeHandler: ChallengeHandler {
    private let body: @Sendable (ReceivedChallenge) async -> ChallengeDisposition

    /// Creates a handler.
    public init(_ body: @escaping @Sendable (ReceivedChallenge) async -> ChallengeDisposition) {
        self.body = body
    }

    public func handle(_ challenge: ReceivedChallenge) async -> ChallengeDisposition {
        await body(challenge)
    }
}

extension ChallengeHandler where Self == ClosureChallengeHandler {
    /// A handler made from a closure: `.closure { challenge in .useCredential(…) }`.
    public static func closure(
        _ body: @escaping @Sendable (ReceivedChallenge) async -> ChallengeDisposition
    ) -> ClosureChallengeHandler {
        ClosureChallengeHandler(body)
    }
}
