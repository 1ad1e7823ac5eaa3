import PeregrineCore
import TestSupport
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("PlainHTTPURL: the parser without Foundation agrees with Foundation's")
struct PlainHTTPURLTests {
    @Test(arguments: [
        "http://example.com/a", "HTTPS://Example.COM:443/a?b=c#d", "http://h:080/", "http://h:8080",
        "http://a.b-c.d/p%2Fq;x=1@y:z/~!$&'()*+,", "http://h?x", "http://h#f", "http://10.0.0.1:1/x?y?z#w/?",
    ])
    func commonURLsAreRecognisedAsFoundationParsesThem(_ string: String) throws {
        let plain = try #require(PlainHTTPURL(string))
        try Self.expectSameAsFoundation(plain, string, seed: nil)
    }

    @Test(arguments: [
        "http://user@h/", "http://[::1]/", "http://xn--bcher-kva.example/", "http://h%41/", "http://h:0/",
        "http://h:65536/", "http://h:/", "http://h:8a/", "http://h/a b", "http://h/ä", "http://h/%zz",
        "http://h/a#b#c", "ftp://h/", "http:/h/", "http://", "http://h/[x]", "http://h_x/",
    ])
    func unusualURLsAreLeftToFoundation(_ string: String) {
        #expect(PlainHTTPURL(string) == nil)
    }

    /// Strings made of URL pieces, valid and not; every one the plain parser recognises must be
    /// what Foundation's parser makes of it. PEREGRINE_PLAIN_URL_SEED replays a run.
    @Test func randomStringsAgreeWithFoundation() throws {
        let seed =
            ProcessInfo.processInfo.environment["PEREGRINE_PLAIN_URL_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        print("randomStringsAgreeWithFoundation: PEREGRINE_PLAIN_URL_SEED=\(seed)")
        var generator = SeededRandom(seed: seed)
        // A third of the strings, and half the pieces of the others, from the first `plain`
        // choices only, which are all plain.
        var plainOnly = false
        func pick(_ choices: [String], plain: Int) -> String {
            let limit = plainOnly || Bool.random(using: &generator) ? plain : choices.count
            return choices[Int.random(in: 0..<limit, using: &generator)]
        }
        let schemes = ["http", "https", "HTTP", "hTtPs", "ftp", "htt", "httpss", ""]
        let separators = ["://", "://", "://", ":/", "//", ":///"]
        let hostPieces = ["a", "B", "z9", "-", ".", "0", "xn--", "Xn--q", "_", "%41", "@", "u:p@", "[::1]", "é"]
        let ports = ["", ":80", ":443", ":080", ":00443", ":65535", ":", ":0", ":65536", ":123456", ":8a"]
        let restPieces = [
            "/", "a", "Z", "%2F", "%2f", "?", "#", "=", "&", ";", ":", "@", "~", "'", "(", "*", "+", ",", "..", "!",
            "$", "%zz", "%", "[", "]", " ", "\"", "<", "{", "|", "\\", "^", "`", "é", "\u{7F}",
        ]
        var recognised = 0
        for _ in 0..<3000 {
            plainOnly = Int.random(in: 0..<3, using: &generator) == 0
            var string = pick(schemes, plain: 4) + pick(separators, plain: 3)
            for _ in 0..<Int.random(in: 1...4, using: &generator) { string += pick(hostPieces, plain: 6) }
            string += pick(ports, plain: 6)
            for _ in 0..<Int.random(in: 0...6, using: &generator) { string += pick(restPieces, plain: 21) }
            guard let plain = PlainHTTPURL(string) else { continue }
            recognised += 1
            try Self.expectSameAsFoundation(plain, string, seed: seed)
        }
        // Most generated strings carry something unusual; a fair share must still be plain.
        #expect(recognised > 300, "only \(recognised) of 3,000 strings recognised, seed \(seed)")
    }

    private static func expectSameAsFoundation(_ plain: PlainHTTPURL, _ string: String, seed: UInt64?) throws {
        let context: Comment = "\(string)\(seed.map { ", seed \($0)" } ?? "")"
        let parsed = try DownloadURL(parsingWithFoundation: string)
        #expect(plain.scheme == parsed.scheme, context)
        #expect(plain.host == parsed.host, context)
        #expect(plain.port == parsed.port, context)
        #expect(plain.normalizedKey == parsed.normalizedKey, context)
        let path = try #require(URLComponents(string: string)).percentEncodedPath
        #expect(plain.path == (path.isEmpty ? "/" : path), context)
        let viaInit = try DownloadURL(string)
        #expect(viaInit.normalizedKey == parsed.normalizedKey && viaInit.host == parsed.host, context)
    }
}
