import PeregrineCore
import PeregrineTransport
import Testing

@Suite("TransferRequest.headersToSend(to:)")
struct TransferRequestHeadersTests {
    static func url(_ string: String) throws -> DownloadURL { try DownloadURL(string) }

    static let basic = RequestCredentials(authorization: "Basic dXNlcjpwYXNz")

    @Test func callersHeadersAreSentInOrder() throws {
        let request = TransferRequest(
            url: try Self.url("https://a.example/f"),
            headers: HTTPHeaders([("User-Agent", "peregrine"), ("Accept", "*/*"), ("X-Trace", "1"), ("x-trace", "2")]))
        let sent = request.headersToSend(to: request.url)
        #expect(sent == request.headers)
    }

    @Test func noRangeMeansNoRangeOrIfRange() throws {
        let request = TransferRequest(url: try Self.url("https://a.example/f"), ifRange: .entityTag("\"v1\""))
        let sent = request.headersToSend(to: request.url)
        #expect(!sent.contains(name: "Range"))
        #expect(!sent.contains(name: "If-Range"), "If-Range without Range means nothing")
    }

    @Test func rangeIsSentWithoutIfRangeWhenThereIsNoValidator() throws {
        let request = TransferRequest(url: try Self.url("https://a.example/f"), range: ByteRange(start: 12345))
        let sent = request.headersToSend(to: request.url)
        #expect(sent.values(for: "Range") == ["bytes=12345-"])
        #expect(!sent.contains(name: "If-Range"))
    }

    @Test func rangeAndIfRangeAreSentTogether() throws {
        let request = TransferRequest(
            url: try Self.url("https://a.example/f"), range: ByteRange(start: 100, end: 199),
            ifRange: .lastModified("Wed, 21 Oct 2015 07:28:00 GMT"))
        let sent = request.headersToSend(to: request.url)
        #expect(sent.values(for: "Range") == ["bytes=100-199"])
        #expect(sent.values(for: "If-Range") == ["Wed, 21 Oct 2015 07:28:00 GMT"])
    }

    @Test func rangeFieldReplacesARangeHeaderTheCallerSet() throws {
        let request = TransferRequest(
            url: try Self.url("https://a.example/f"),
            headers: HTTPHeaders([("range", "bytes=0-"), ("If-Range", "\"old\"")]),
            range: ByteRange(start: 500), ifRange: .entityTag("\"new\""))
        let sent = request.headersToSend(to: request.url)
        #expect(sent.values(for: "Range") == ["bytes=500-"])
        #expect(sent.values(for: "If-Range") == ["\"new\""])
    }

    @Test func rangeIsSentOnEveryHop() throws {
        let request = TransferRequest(
            url: try Self.url("https://a.example/f"), range: ByteRange(start: 7), ifRange: .entityTag("\"e\""))
        let sent = request.headersToSend(to: try Self.url("https://cdn.example/f"))
        #expect(sent["Range"] == "bytes=7-")
        #expect(sent["If-Range"] == "\"e\"")
    }

    @Test func authorizationIsSentToTheSameOriginOverHTTPS() throws {
        let request = TransferRequest(url: try Self.url("https://a.example/f"), credentials: Self.basic)
        #expect(request.headersToSend(to: request.url).values(for: "Authorization") == ["Basic dXNlcjpwYXNz"])
        // The same origin spelled differently.
        let sameOrigin = try Self.url("HTTPS://A.EXAMPLE:443/other")
        #expect(request.headersToSend(to: sameOrigin)["authorization"] == "Basic dXNlcjpwYXNz")
    }

    @Test func authorizationFromCredentialsReplacesTheCallers() throws {
        let request = TransferRequest(
            url: try Self.url("https://a.example/f"), headers: HTTPHeaders([("authorization", "Bearer old")]),
            credentials: Self.basic)
        #expect(request.headersToSend(to: request.url).values(for: "Authorization") == ["Basic dXNlcjpwYXNz"])
    }

    @Test func authorizationIsNotSentOverPlainHTTP() throws {
        let request = TransferRequest(url: try Self.url("http://a.example/f"), credentials: Self.basic)
        #expect(!request.headersToSend(to: request.url).contains(name: "Authorization"))
    }

    @Test func authorizationIsSentOverPlainHTTPWhenAllowed() throws {
        let credentials = RequestCredentials(authorization: "Basic dXNlcjpwYXNz", allowPlainHTTP: true)
        let request = TransferRequest(url: try Self.url("http://a.example/f"), credentials: credentials)
        #expect(request.headersToSend(to: request.url)["Authorization"] == "Basic dXNlcjpwYXNz")
    }

    @Test(arguments: [
        "https://b.example/f",  // another host
        "https://a.example:8443/f",  // another port
        "http://a.example/f",  // another scheme
        "https://sub.a.example/f",  // a subdomain is another origin
    ])
    func authorizationIsNotSentToAnotherOrigin(_ hop: String) throws {
        let credentials = RequestCredentials(authorization: "Basic dXNlcjpwYXNz", allowPlainHTTP: true)
        let request = TransferRequest(url: try Self.url("https://a.example/f"), credentials: credentials)
        #expect(!request.headersToSend(to: try Self.url(hop)).contains(name: "Authorization"))
    }

    @Test func authorizationIsNotSentFromHTTPToTheHTTPSOriginOfTheSameHost() throws {
        let credentials = RequestCredentials(authorization: "Basic dXNlcjpwYXNz", allowPlainHTTP: true)
        let request = TransferRequest(url: try Self.url("http://a.example/f"), credentials: credentials)
        #expect(!request.headersToSend(to: try Self.url("https://a.example/f")).contains(name: "Authorization"))
    }

    @Test(arguments: [
        "https://b.example/f", "https://a.example:8443/f", "http://a.example/f", "http://a.example:443/f",
    ])
    func callersCredentialHeadersAreDroppedOnAHopToAnotherOrigin(_ hop: String) throws {
        let request = TransferRequest(
            url: try Self.url("https://a.example/f"),
            headers: HTTPHeaders([
                ("User-Agent", "peregrine"), ("Authorization", "Bearer secret"), ("cookie", "session=1"),
                ("Accept", "*/*"), ("PROXY-AUTHORIZATION", "Basic cHJveHk="), ("Cookie", "other=2"),
            ]))
        let sent = request.headersToSend(to: try Self.url(hop))
        #expect(!sent.contains(name: "Authorization"))
        #expect(!sent.contains(name: "Cookie"))
        #expect(!sent.contains(name: "Proxy-Authorization"))
        #expect(sent.fields.map(\.name) == ["User-Agent", "Accept"])
    }

    @Test func callersCredentialHeadersStayOnTheSameOrigin() throws {
        let headers = HTTPHeaders([
            ("Authorization", "Bearer secret"), ("Cookie", "session=1"), ("Proxy-Authorization", "Basic cHJveHk="),
        ])
        let request = TransferRequest(url: try Self.url("https://a.example/f"), headers: headers)
        #expect(request.headersToSend(to: try Self.url("https://a.example:443/g")) == headers)
    }

    @Test func requestFromAStringChecksTheURL() throws {
        let request = try TransferRequest(url: "https://a.example/f", method: .head)
        #expect(request.method == .head)
        #expect(request.url.string == "https://a.example/f")
        let error = #expect(throws: URLValidationError.self) { try TransferRequest(url: "ftp://a.example/f") }
        #expect(error?.code == .unsupportedScheme)
    }

    @Test func requestDefaultsAreTheSafeOnes() throws {
        let request = TransferRequest(url: try Self.url("https://a.example/f"))
        #expect(request.method == .get)
        #expect(request.headers.isEmpty)
        #expect(request.range == nil)
        #expect(request.ifRange == nil)
        #expect(request.credentials == nil)
        #expect(request.trust == .system)
        #expect(request.redirects == RedirectPolicy(maxHops: 10, allowsHTTPSToHTTP: false))
        #expect(request.maxReceiveBytesPerSecond == nil)
    }
}
