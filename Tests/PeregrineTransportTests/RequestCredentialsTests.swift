import PeregrineCore
import PeregrineTransport
import Testing

@Suite("RequestCredentials.isAllowed")
struct RequestCredentialsTests {
    @Test func credentialsAreAllowedOverHTTPS() throws {
        let credentials = RequestCredentials(authorization: "Basic eDp5")
        #expect(credentials.isAllowed(for: try DownloadURL("https://a.example/f")))
        #expect(credentials.isAllowed(for: try DownloadURL("HTTPS://a.example:8443/f")))
    }

    @Test func credentialsAreRefusedOverPlainHTTPByDefault() throws {
        let credentials = RequestCredentials(authorization: "Basic eDp5")
        #expect(!credentials.allowPlainHTTP)
        #expect(!credentials.isAllowed(for: try DownloadURL("http://a.example/f")))
        #expect(!credentials.isAllowed(for: try DownloadURL("HTTP://127.0.0.1:8080/f")))
    }

    @Test func credentialsAreAllowedOverPlainHTTPWhenSaidSo() throws {
        let credentials = RequestCredentials(authorization: "Basic eDp5", allowPlainHTTP: true)
        #expect(credentials.isAllowed(for: try DownloadURL("http://a.example/f")))
        #expect(credentials.isAllowed(for: try DownloadURL("https://a.example/f")))
    }
}
