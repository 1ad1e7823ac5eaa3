import PeregrineCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which redirects a transfer follows.
///
/// Both backends follow redirects through ``decide(from:to:status:hopsSoFar:)``, so they agree on
/// every hop: a count limit, no downgrade from https to http unless allowed, and no credentials
/// to another origin.
public struct RedirectPolicy: Sendable, Hashable {
    /// The most redirects to follow; with 0, any redirect ends the transfer with
    /// ``TransportError/Code/tooManyRedirects``.
    public var maxHops: Int
    /// Whether a redirect from https to plain http is followed.
    public var allowsHTTPSToHTTP: Bool

    /// Creates a policy: 10 hops, no downgrade.
    public init(maxHops: Int = 10, allowsHTTPSToHTTP: Bool = false) {
        self.maxHops = maxHops
        self.allowsHTTPSToHTTP = allowsHTTPSToHTTP
    }

    /// Headers that carry credentials and are dropped on a hop to another origin.
    public static let credentialHeaderNames = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// The statuses that are followed as redirects.
    public static func isRedirect(status: Int) -> Bool {
        [301, 302, 303, 307, 308].contains(status)
    }

    /// Resolves a `Location` value against the URL that answered (RFC 3986 §5), so that
    /// `/a`, `b?x=1` and `//host/c` become absolute. Both backends resolve through this.
    public static func resolve(location: String, against base: DownloadURL) -> String {
        let trimmed = location.trimmed
        return URL(string: trimmed, relativeTo: base.url)?.absoluteString ?? trimmed
    }

    /// What to do with a redirect.
    public enum Decision: Sendable, Hashable {
        /// Follow it to this URL.
        case follow(DownloadURL)
        /// Refuse it; the transfer ends with this error.
        case refuse(TransportError)
    }

    /// Decides whether to follow a redirect from `current` to `location`.
    ///
    /// - Parameters:
    ///   - current: the URL that answered with the redirect.
    ///   - location: the absolute target (the backend resolves a relative `Location`), or nil when
    ///     the response had none.
    ///   - status: the redirect status.
    ///   - hopsSoFar: redirects already followed in this transfer.
    public func decide(from current: DownloadURL, to location: String?, status: Int, hopsSoFar: Int) -> Decision {
        guard let location, !location.isEmpty else {
            return .refuse(
                TransportError(
                    .protocolViolation, "redirect \(status) from \(current) has no Location", url: current.string)
            )
        }
        let target: DownloadURL
        do {
            target = try DownloadURL(location)
        } catch {
            return .refuse(
                TransportError(.invalidRedirect, "redirect to an unusable URL: \(error)", url: current.string))
        }
        guard hopsSoFar < maxHops else {
            return .refuse(
                TransportError(
                    .tooManyRedirects, "more than \(maxHops) redirects, the last to \(target)", url: current.string)
            )
        }
        if current.scheme == "https", target.scheme == "http", !allowsHTTPSToHTTP {
            return .refuse(
                TransportError(
                    .insecureRedirect,
                    "refused redirect from https to plain http (\(target)); allow it in the redirect policy if intended",
                    url: current.string
                )
            )
        }
        return .follow(target)
    }
}
