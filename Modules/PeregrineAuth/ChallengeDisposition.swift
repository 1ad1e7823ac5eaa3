/// What a ``ChallengeHandler`` decides about a challenge, as URLSession's
/// `AuthChallengeDisposition` (which SDEDownloadManager's challenge handlers return).
public enum ChallengeDisposition: Sendable, Hashable {
    /// Answer with this credential.
    case useCredential(Credential)
    /// Let the next handler decide; in the end, the default handling answers Basic and Digest
    /// with the ``CredentialStore``'s credential for the space, unless it was already rejected.
    case performDefaultHandling
    /// Do not answer: the transfer fails with an authentication error.
    case cancelAuthenticationChallenge
    /// Skip this challenge and consider the next (weaker or other-realm) one of the response.
    case rejectProtectionSpace
}
