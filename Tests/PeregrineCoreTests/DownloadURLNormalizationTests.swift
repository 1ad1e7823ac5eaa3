import PeregrineCore
import TestSupport
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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

    /// The host as Foundation decodes it (`URLComponents.host`), lower-cased, without brackets:
    /// what `DownloadURL` reads from the encoded host when that needs no decoding.
    private static func decodedHost(_ string: String) throws -> String {
        var host = try #require(URLComponents(string: string)?.host)
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.lowercased()
    }

    @Test(arguments: [
        "http://Example.COM/a", "http://example.com:8080/", "http://192.168.0.1/x", "http://[::1]:8080/",
        "HTTP://[FE80::1]/a", "http://xn--bcher-kva.example/", "http://XN--BCHER-KVA.example/",
        "http://a.Xn--bcher-kva.example/", "http://x.xn--n3h.com/", "http://axn--b.com/", "http://ex%41mple.com/",
        "http://b%C3%BCcher.example/", "http://bücher.example/", "https://例え.テスト/", "http://a-b.c_d.example/",
    ])
    func hostIsFoundationsDecodedHost(_ string: String) throws {
        #expect(try DownloadURL(string).host == Self.decodedHost(string))
    }

    /// Random ASCII hosts (letters of both cases, digits, `-`, `.`, and now and then `xn--`).
    /// PEREGRINE_URL_HOST_SEED replays a run.
    @Test func randomASCIIHostsAreFoundationsDecodedHosts() throws {
        let seed =
            ProcessInfo.processInfo.environment["PEREGRINE_URL_HOST_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("randomASCIIHostsAreFoundationsDecodedHosts: PEREGRINE_URL_HOST_SEED=\(seed)")
        var generator = SeededRandom(seed: seed)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
        for _ in 0..<2000 {
            var labels: [String] = []
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                var label = Int.random(in: 0..<8, using: &generator) == 0 ? "xN--" : ""
                for _ in 0..<Int.random(in: 1...12, using: &generator) {
                    label.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)])
                }
                labels.append(label)
            }
            let string = "http://\(labels.joined(separator: "."))/f"
            guard let url = try? DownloadURL(string) else { continue }
            #expect(url.host == (try Self.decodedHost(string)), "\(string), seed \(seed)")
        }
    }

    @Test(
        arguments: [
            ("0", Int64(0)), ("007", 7), ("9223372036854775807", Int64.max), ("9223372036854775808", nil),
            ("99999999999999999999", nil), ("", nil), ("+1", nil), ("-1", nil), (" 1", nil), ("1 ", nil),
            ("\u{661}", nil), ("12a", nil),
        ] as [(String, Int64?)])
    func decimalDigitsParseASCIIDigitsOnly(_ text: String, _ value: Int64?) {
        #expect(Int64(decimalDigits: text) == value)
        #expect(Int64(decimalDigits: Substring(text)) == value)
    }
}
