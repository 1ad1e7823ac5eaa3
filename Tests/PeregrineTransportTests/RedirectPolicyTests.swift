import PeregrineCore
import PeregrineTransport
import Testing

@Suite("RedirectPolicy.decide")
struct RedirectPolicyTests {
    static func url(_ string: String) throws -> DownloadURL { try DownloadURL(string) }

    /// The error of a refusal, or nil (with an issue recorded) for a decision to follow.
    static func refusal(_ decision: RedirectPolicy.Decision, sourceLocation: SourceLocation = #_sourceLocation)
        -> TransportError?
    {
        guard case .refuse(let error) = decision else {
            Issue.record("expected a refusal, got \(decision)", sourceLocation: sourceLocation)
            return nil
        }
        return error
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func followsARedirectWithinTheLimit(status: Int) throws {
        let policy = RedirectPolicy()
        let decision = policy.decide(
            from: try Self.url("https://a.example/file"), to: "https://b.example/file", status: status, hopsSoFar: 0)
        #expect(decision == .follow(try Self.url("https://b.example/file")))
    }

    @Test func followsTheLastHopTheLimitAllows() throws {
        let policy = RedirectPolicy(maxHops: 3)
        let decision = policy.decide(
            from: try Self.url("http://a.example/"), to: "http://a.example/next", status: 302, hopsSoFar: 2)
        #expect(decision == .follow(try Self.url("http://a.example/next")))
    }

    @Test func refusesTooManyRedirectsAtTheLimit() throws {
        let policy = RedirectPolicy(maxHops: 3)
        let error = Self.refusal(
            policy.decide(
                from: try Self.url("http://a.example/"), to: "http://a.example/next", status: 302, hopsSoFar: 3))
        #expect(error?.code == .tooManyRedirects)
        #expect(error?.url == "http://a.example/")
    }

    @Test func defaultPolicyAllowsTenHops() throws {
        let policy = RedirectPolicy()
        #expect(policy.maxHops == 10)
        #expect(!policy.allowsHTTPSToHTTP)
        let from = try Self.url("https://a.example/")
        #expect(
            policy.decide(from: from, to: "https://a.example/x", status: 301, hopsSoFar: 9)
                == .follow(try Self.url("https://a.example/x")))
        #expect(
            Self.refusal(policy.decide(from: from, to: "https://a.example/x", status: 301, hopsSoFar: 10))?.code
                == .tooManyRedirects)
    }

    @Test func maxHopsZeroRefusesTheFirstRedirect() throws {
        let policy = RedirectPolicy(maxHops: 0)
        let error = Self.refusal(
            policy.decide(
                from: try Self.url("https://a.example/"), to: "https://a.example/b", status: 301, hopsSoFar: 0))
        #expect(error?.code == .tooManyRedirects)
    }

    @Test func refusesHTTPSToHTTPByDefault() throws {
        let error = Self.refusal(
            RedirectPolicy().decide(
                from: try Self.url("https://a.example/file"), to: "http://a.example/file", status: 302, hopsSoFar: 0))
        #expect(error?.code == .insecureRedirect)
        #expect(error?.url == "https://a.example/file")
        #expect(error?.message.contains("http://a.example/file") == true)
    }

    @Test func refusesHTTPSToHTTPWhateverTheCaseOfTheScheme() throws {
        let error = Self.refusal(
            RedirectPolicy().decide(
                from: try Self.url("HTTPS://a.example/file"), to: "HTTP://a.example/file", status: 302, hopsSoFar: 0))
        #expect(error?.code == .insecureRedirect)
    }

    @Test func followsHTTPSToHTTPWhenAllowed() throws {
        let policy = RedirectPolicy(allowsHTTPSToHTTP: true)
        let decision = policy.decide(
            from: try Self.url("https://a.example/file"), to: "http://a.example/file", status: 302, hopsSoFar: 0)
        #expect(decision == .follow(try Self.url("http://a.example/file")))
    }

    @Test func followsHTTPToHTTPS() throws {
        let decision = RedirectPolicy().decide(
            from: try Self.url("http://a.example/file"), to: "https://a.example/file", status: 301, hopsSoFar: 0)
        #expect(decision == .follow(try Self.url("https://a.example/file")))
    }

    @Test func followsPlainHTTPToPlainHTTP() throws {
        let decision = RedirectPolicy().decide(
            from: try Self.url("http://a.example/file"), to: "http://b.example:8080/file", status: 307, hopsSoFar: 1)
        #expect(decision == .follow(try Self.url("http://b.example:8080/file")))
    }

    @Test(arguments: [nil, ""] as [String?])
    func missingLocationIsAProtocolViolation(location: String?) throws {
        let error = Self.refusal(
            RedirectPolicy().decide(from: try Self.url("https://a.example/"), to: location, status: 302, hopsSoFar: 0))
        #expect(error?.code == .protocolViolation)
        #expect(error?.url == "https://a.example/")
    }

    @Test(arguments: ["ftp://a.example/file", "file:///etc/passwd", "https://", "not a url", "https://a.example:0/"])
    func unusableTargetIsAnInvalidRedirect(location: String) throws {
        let error = Self.refusal(
            RedirectPolicy().decide(from: try Self.url("https://a.example/"), to: location, status: 302, hopsSoFar: 0))
        #expect(error?.code == .invalidRedirect)
        #expect(error?.url == "https://a.example/")
    }

    @Test func redirectStatusesAreTheFiveFollowed() {
        for status in [301, 302, 303, 307, 308] { #expect(RedirectPolicy.isRedirect(status: status)) }
        for status in [200, 204, 206, 300, 304, 305, 306, 309, 400, 404, 500] {
            #expect(!RedirectPolicy.isRedirect(status: status))
        }
    }

    @Test func credentialHeadersAreTheThreeThatCarrySecrets() {
        #expect(
            Set(RedirectPolicy.credentialHeaderNames.map { $0.lowercased() }) == [
                "authorization", "proxy-authorization", "cookie",
            ])
    }
}
