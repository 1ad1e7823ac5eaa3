import PeregrineCore
import Testing

@Suite("DownloadURL validation")
struct DownloadURLValidationTests {
    /// A URL string and what parsing must make of it.
    struct Accepted: Sendable, CustomTestStringConvertible {
        var string: String
        var scheme: String
        var host: String
        var port: Int
        var testDescription: String { string }
    }

    static let acceptedURLs: [Accepted] = [
        Accepted(string: "http://example.com/a", scheme: "http", host: "example.com", port: 80),
        Accepted(string: "https://example.com/a", scheme: "https", host: "example.com", port: 443),
        Accepted(string: "https://example.com", scheme: "https", host: "example.com", port: 443),
        Accepted(string: "HTTPS://Example.COM/x", scheme: "https", host: "example.com", port: 443),
        Accepted(string: "http://example.com:8080/a?b=c#d", scheme: "http", host: "example.com", port: 8080),
        Accepted(string: "http://127.0.0.1:1/", scheme: "http", host: "127.0.0.1", port: 1),
        Accepted(string: "http://example.com:65535/", scheme: "http", host: "example.com", port: 65535),
        Accepted(string: "http://[::1]:8080/a", scheme: "http", host: "::1", port: 8080),
        Accepted(string: "https://[::1]/a", scheme: "https", host: "::1", port: 443),
        Accepted(string: "http://[FE80::1]/a", scheme: "http", host: "fe80::1", port: 80),
        Accepted(string: "http://user:secret@example.com/a", scheme: "http", host: "example.com", port: 80),
    ]

    @Test(arguments: acceptedURLs)
    func downloadURLAcceptsHTTPAndHTTPSWithAHost(_ expected: Accepted) throws {
        let url = try DownloadURL(expected.string)
        #expect(url.scheme == expected.scheme)
        #expect(url.host == expected.host)
        #expect(url.port == expected.port)
        #expect(url.string == expected.string)
        #expect(url.origin == Origin(scheme: expected.scheme, host: expected.host, port: expected.port))
    }

    /// A URL string and the code its refusal must carry.
    struct Refused: Sendable, CustomTestStringConvertible {
        var string: String
        var code: URLValidationError.Code
        var testDescription: String { "\(string.debugDescription) → \(code)" }
    }

    static let refusedURLs: [Refused] = [
        Refused(string: "", code: .empty),
        Refused(string: "ftp://example.com/a", code: .unsupportedScheme),
        Refused(string: "file:///etc/passwd", code: .unsupportedScheme),
        Refused(string: "httpx://example.com/a", code: .unsupportedScheme),
        Refused(string: "http://", code: .missingHost),
        Refused(string: "https://", code: .missingHost),
        Refused(string: "http:///path", code: .missingHost),
        Refused(string: "http:example.com/a", code: .missingHost),
        Refused(string: "example.com/a", code: .missingScheme),
        Refused(string: "//example.com/a", code: .missingScheme),
        Refused(string: "/relative/path", code: .missingScheme),
        Refused(string: "http://example.com/a b", code: .malformed),
        Refused(string: " http://example.com/a", code: .malformed),
        Refused(string: "http://example.com/a\t", code: .malformed),
        Refused(string: "http://example.com/a\nb", code: .malformed),
        Refused(string: "http://example.com/a\r\nX-Injected: 1", code: .malformed),
        Refused(string: "http://example.com/\u{0}", code: .malformed),
        Refused(string: "http://example.com/\u{1B}", code: .malformed),
        Refused(string: "http://example.com/\u{7F}", code: .malformed),
        Refused(string: "http://example.com:0/a", code: .invalidPort),
        Refused(string: "http://example.com:65536/a", code: .invalidPort),
        Refused(string: "http://example.com:70000/a", code: .invalidPort),
        Refused(string: "https://[::1]:70000/a", code: .invalidPort),
    ]

    @Test(arguments: refusedURLs)
    func downloadURLRefusesWithTheMatchingCode(_ expected: Refused) {
        let error = #expect(throws: URLValidationError.self) { try DownloadURL(expected.string) }
        #expect(error?.code == expected.code)
        #expect(error?.urlString == expected.string)
    }

    /// A port too large for any integer type is still an invalid port, not "no port" (which would
    /// silently send the request to port 80).
    @Test func downloadURLRefusesAPortThatOverflows() {
        let error = #expect(throws: URLValidationError.self) {
            try DownloadURL("http://example.com:99999999999999999999/a")
        }
        #expect(error?.code == .invalidPort)
    }

    /// U+0085 (NEXT LINE) is both a control character (C1) and white space.
    @Test func downloadURLRefusesAC1ControlCharacter() {
        let error = #expect(throws: URLValidationError.self) { try DownloadURL("http://example.com/a\u{85}b") }
        #expect(error?.code == .malformed)
    }

    @Test func refusedURLStringIsCutTo200Characters() {
        let long = "ftp://example.com/" + String(repeating: "a", count: 500)
        let error = #expect(throws: URLValidationError.self) { try DownloadURL(long) }
        #expect(error?.code == .unsupportedScheme)
        #expect(error?.urlString == String(long.prefix(200)) + "…")
    }

    @Test func unsupportedSchemeErrorSaysWhichSchemesWork() {
        let error = #expect(throws: URLValidationError.self) { try DownloadURL("ftp://example.com/a") }
        let description = error?.description ?? ""
        #expect(description.contains("ftp://example.com/a"))
        #expect(description.contains("only http and https"))
    }
}

@Suite struct LoggableURLTests {
    @Test func credentialsNeverReachALogLine() {
        #expect(DownloadURL.loggable("https://user:s3cret@example.org/a.iso") == "https://***@example.org/a.iso")
        #expect(DownloadURL.loggable("http://u@example.org:8080/p?q=a@b") == "http://***@example.org:8080/p?q=a@b")
        #expect(DownloadURL.loggable("https://example.org/a@b.iso") == "https://example.org/a@b.iso")
        #expect(DownloadURL.loggable("not a url") == "not a url")
    }
}
