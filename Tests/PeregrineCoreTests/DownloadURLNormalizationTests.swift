import PeregrineCore
import Testing

@Suite("DownloadURL normalizedKey and identity")
struct DownloadURLNormalizationTests {
    @Test func normalizedKeyLowerCasesSchemeAndHostAndDropsTheDefaultPort() throws {
        let shouting = try DownloadURL("HTTP://Example.COM:80/a")
        let plain = try DownloadURL("http://example.com/a")
        #expect(shouting.normalizedKey == plain.normalizedKey)
        #expect(plain.normalizedKey == "http://example.com/a")
    }

    @Test func normalizedKeyDropsTheHTTPSDefaultPort() throws {
        #expect(try DownloadURL("https://Example.com:443/a").normalizedKey == "https://example.com/a")
    }

    @Test func normalizedKeyKeepsANonDefaultPort() throws {
        #expect(try DownloadURL("https://example.com:8443/a").normalizedKey == "https://example.com:8443/a")
        #expect(try DownloadURL("HTTPS://EXAMPLE.com:8443/a").normalizedKey == "https://example.com:8443/a")
        // 443 is not the default port of plain http, nor 80 of https.
        #expect(try DownloadURL("http://example.com:443/a").normalizedKey == "http://example.com:443/a")
        #expect(try DownloadURL("https://example.com:80/a").normalizedKey == "https://example.com:80/a")
    }

    @Test func normalizedKeyOfDifferentPortsDiffers() throws {
        let standard = try DownloadURL("https://example.com/a")
        let other = try DownloadURL("https://example.com:8443/a")
        #expect(standard.normalizedKey != other.normalizedKey)
    }

    @Test func normalizedKeyKeepsPathQueryAndFragmentAsGiven() throws {
        let url = try DownloadURL("HTTP://Example.COM/Some/Path?Query=Value#Frag")
        #expect(url.normalizedKey == "http://example.com/Some/Path?Query=Value#Frag")
    }

    @Test func normalizedKeyGivesAnEmptyPathTheRoot() throws {
        #expect(try DownloadURL("http://example.com").normalizedKey == "http://example.com/")
        #expect(try DownloadURL("http://example.com").normalizedKey == DownloadURL("http://example.com/").normalizedKey)
    }

    @Test func normalizedKeyKeepsIPv6Brackets() throws {
        #expect(try DownloadURL("http://[::1]:8080/a").normalizedKey == "http://[::1]:8080/a")
        #expect(try DownloadURL("HTTP://[FE80::1]:80/a").normalizedKey == "http://[fe80::1]/a")
    }

    @Test func stringStaysExactlyAsGiven() throws {
        for text in ["HTTP://Example.COM:80/a", "http://example.com", "https://[::1]:8443/A?b#c"] {
            let url = try DownloadURL(text)
            #expect(url.string == text)
            #expect(url.description == text)
        }
    }

    @Test func equalityFollowsTheStringNotTheNormalizedKey() throws {
        let shouting = try DownloadURL("HTTP://Example.COM:80/a")
        let plain = try DownloadURL("http://example.com/a")
        #expect(shouting != plain)
        #expect(shouting == (try DownloadURL("HTTP://Example.COM:80/a")))
        #expect(Set([shouting, plain, try DownloadURL("http://example.com/a")]).count == 2)
    }

    @Test func originFillsInTheDefaultPort() throws {
        #expect(try DownloadURL("HTTP://Example.COM/a").origin == Origin(scheme: "http", host: "example.com", port: 80))
        #expect(
            try DownloadURL("https://example.com/a").origin == Origin(scheme: "https", host: "example.com", port: 443))
        #expect(
            try DownloadURL("https://example.com:443/b").origin == (try DownloadURL("https://example.com/a")).origin)
        #expect(try DownloadURL("https://example.com:8443/").origin.description == "https://example.com:8443")
    }

    /// Found by FuzzRPCRequest: a host with non-ASCII letters is encoded by the parse, and the
    /// key was cut from the given string with the encoded string's ranges (a crash).
    @Test(arguments: ["http://moc\u{154}\u{44B}e0t/=c.bin", "http://BÜCHER.example:80/ä?q=ü", "https://例え.テスト/"])
    func aURLTheParseEncodesGetsAKeyOfItsEncodedForm(_ string: String) throws {
        let url = try DownloadURL(string)
        #expect(url.string == string)
        #expect(url.normalizedKey.hasPrefix(string.hasPrefix("https") ? "https://" : "http://"))
        #expect(!url.normalizedKey.contains(":80/"))
        // The same URL spelled with an upper-case scheme has the same key.
        let shouting = try DownloadURL(string.replacingOccurrences(of: "http", with: "HTTP"))
        #expect(shouting.normalizedKey == url.normalizedKey)
    }
}
